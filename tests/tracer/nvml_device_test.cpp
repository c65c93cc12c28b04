// nvmlDeviceOf() with a fake NVML: the CUDA device is found by its PCI bus
// id (or UUID), never by CUDA's index, so under CUDA_VISIBLE_DEVICES=2,3
// `cuda:0` samples physical GPU 2, not GPU 0.
#include "tracer/nvml_device.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace bubblescope::tracer {
namespace {

// A machine of four GPUs as NVML sees it: physical index -> bus id, UUID.
struct FakeNvml {
  int gpus[4] = {0, 1, 2, 3};  // handles are &gpus[i]
  std::map<std::string, int> byBus = {{"00000000:18:00.0", 0},
                                      {"00000000:3B:00.0", 1},
                                      {"00000000:86:00.0", 2},
                                      {"00000000:AF:00.0", 3}};
  std::map<std::string, int> byUuid = {{"GPU-00000000-0000-0000-0000-000000000002", 2}};
  int busLookups = 0;
  NvmlLookup lookup() {
    return {[this](const std::string& bus) -> Result<NvmlHandle> {
              ++busLookups;
              auto it = byBus.find(bus);
              if (it == byBus.end()) return Status::notFound("NVML error 6");
              return static_cast<NvmlHandle>(&gpus[it->second]);
            },
            [this](const std::string& uuid) -> Result<NvmlHandle> {
              auto it = byUuid.find(uuid);
              if (it == byUuid.end()) return Status::notFound("NVML error 6");
              return static_cast<NvmlHandle>(&gpus[it->second]);
            }};
  }
  int physicalIndex(NvmlHandle h) const { return *static_cast<const int*>(h); }
};

TEST(NvmlDeviceTest, PciBusIdsAreNormalisedToNvmlsForm) {
  EXPECT_EQ(*normalisedPciBusId("0000:3b:00.0"), "00000000:3B:00.0");      // CUDA's form
  EXPECT_EQ(*normalisedPciBusId("00000000:3B:00.0"), "00000000:3B:00.0");  // NVML's
  EXPECT_EQ(*normalisedPciBusId("1:af:1f.7"), "00000001:AF:1F.7");
  for (const char* bad :
       {"", "3b:00.0", "0000:3b:00", "0000:3b:20.0", "0000:3b:00.8", "0000:3g:00.0",
        "0000:123:00.0", "000000000:3b:00.0", "0000:3b:00.0x", "0000::00.0"}) {
    EXPECT_FALSE(normalisedPciBusId(bad).isOk()) << bad;
  }
}

TEST(NvmlDeviceTest, CudaUuidBytesAreWrittenAsNvmlWritesThem) {
  std::array<uint8_t, 16> bytes{};
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(0x10 * (i % 16) + i);
  EXPECT_EQ(nvmlUuidOf(bytes), "GPU-00112233-4455-6677-8899-aabbccddeeff");
  bytes.fill(0);
  bytes[15] = 2;
  EXPECT_EQ(nvmlUuidOf(bytes), "GPU-00000000-0000-0000-0000-000000000002");
}

// CUDA_VISIBLE_DEVICES=2,3: CUDA's device 0 is the GPU on bus 86, NVML's 2.
TEST(NvmlDeviceTest, AHiddenGpuDoesNotShiftTheDevice) {
  FakeNvml nvml;
  auto handle = nvmlDeviceOf({.pciBusId = "0000:86:00.0", .uuid = ""}, nvml.lookup());
  ASSERT_TRUE(handle.isOk()) << handle.status().message();
  EXPECT_EQ(nvml.physicalIndex(*handle), 2);
  // CUDA's device 1 there: bus af, NVML's 3.
  handle = nvmlDeviceOf({.pciBusId = "0000:af:00.0", .uuid = ""}, nvml.lookup());
  ASSERT_TRUE(handle.isOk());
  EXPECT_EQ(nvml.physicalIndex(*handle), 3);
}

TEST(NvmlDeviceTest, TheUuidIsTheFallbackAndNeitherIsAnError) {
  FakeNvml nvml;
  const std::string uuid = "GPU-00000000-0000-0000-0000-000000000002";
  auto handle = nvmlDeviceOf({.pciBusId = "0000:99:00.0", .uuid = uuid}, nvml.lookup());
  ASSERT_TRUE(handle.isOk());
  EXPECT_EQ(nvml.physicalIndex(*handle), 2);
  handle = nvmlDeviceOf({.pciBusId = "", .uuid = uuid}, nvml.lookup());
  ASSERT_TRUE(handle.isOk());
  EXPECT_EQ(nvml.physicalIndex(*handle), 2);
  EXPECT_EQ(nvml.busLookups, 1);  // no bus id: not asked

  auto none = nvmlDeviceOf({.pciBusId = "0000:99:00.0", .uuid = "GPU-x"}, nvml.lookup());
  ASSERT_FALSE(none.isOk());
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  EXPECT_NE(none.status().message().find("00000000:99:00.0"), std::string::npos)
      << none.status().message();
  EXPECT_NE(none.status().message().find("GPU-x"), std::string::npos);
  // Nothing to go by: refused, not device 0.
  EXPECT_FALSE(nvmlDeviceOf({}, nvml.lookup()).isOk());
  EXPECT_FALSE(nvmlDeviceOf({.pciBusId = "garbage", .uuid = ""}, nvml.lookup()).isOk());
}

}  // namespace
}  // namespace bubblescope::tracer
