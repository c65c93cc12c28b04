// chooseBackend() with fake probes (a machine with and without a GPU), and
// the real probe and factory on this machine.
#include <gtest/gtest.h>

#include "engine/backend_factory.h"

namespace bubblescope::engine {
namespace {

GpuProbe noGpu() {
  GpuProbe p;
  p.cudaBuilt = true;
  p.reason = "CUDA says: no CUDA-capable device is detected (cudaErrorNoDevice)";
  return p;
}

GpuProbe oneGpu() {
  GpuProbe p;
  p.cudaBuilt = true;
  p.deviceCount = 1;
  p.firstGpu = "NVIDIA H200 (sm_90, 139 GiB)";
  return p;
}

TEST(ChooseBackend, CpuNeverProbesAndSaysNothing) {
  for (const GpuProbe& probe : {noGpu(), oneGpu()}) {
    auto c = chooseBackend(layout::Backend::kCpu, probe);
    ASSERT_TRUE(c.isOk());
    EXPECT_EQ(c->device, Device::kHost);
    EXPECT_EQ(c->note, "");
  }
  auto real = chooseBackend(layout::Backend::kCpu);
  ASSERT_TRUE(real.isOk());
  EXPECT_EQ(real->device, Device::kHost);
}

TEST(ChooseBackend, CudaWithoutGpuFailsNamingWhy) {
  auto c = chooseBackend(layout::Backend::kCuda, noGpu());
  ASSERT_FALSE(c.isOk());
  EXPECT_EQ(c.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(c.status().message(),
            "backend cuda needs a GPU but none is usable: CUDA says: no CUDA-capable device is "
            "detected (cudaErrorNoDevice)");
}

TEST(ChooseBackend, AutoWithoutGpuRunsOnTheCpuAndSaysSo) {
  auto c = chooseBackend(layout::Backend::kAuto, noGpu());
  ASSERT_TRUE(c.isOk());
  EXPECT_EQ(c->device, Device::kHost);
  EXPECT_EQ(c->note,
            "backend auto: no usable GPU (CUDA says: no CUDA-capable device is detected "
            "(cudaErrorNoDevice)); running on the CPU");
}

TEST(ChooseBackend, WithAGpuParallelTrainersRunOnCuda) {
  static_assert(kCudaModelWired, "update these expectations if parallel runs leave CUDA");
  auto cuda = chooseBackend(layout::Backend::kCuda, oneGpu());
  ASSERT_TRUE(cuda.isOk()) << cuda.status().toString();
  EXPECT_EQ(cuda->device, Device::kCuda);
  EXPECT_EQ(cuda->note, "");
  EXPECT_EQ(cuda->visibleDevices, 1);
  auto autoChoice = chooseBackend(layout::Backend::kAuto, oneGpu());
  ASSERT_TRUE(autoChoice.isOk());
  EXPECT_EQ(autoChoice->device, Device::kCuda);
  EXPECT_EQ(autoChoice->note, "");
}

TEST(ChooseBackend, WithAGpuTheSingleProcessTrainerRunsOnCuda) {
  static_assert(kCudaSingleProcessWired);
  const auto single = TrainingScope::kSingleProcess;
  auto cuda = chooseBackend(layout::Backend::kCuda, oneGpu(), single);
  ASSERT_TRUE(cuda.isOk()) << cuda.status().toString();
  EXPECT_EQ(cuda->device, Device::kCuda);
  EXPECT_EQ(cuda->note, "");
  EXPECT_EQ(cuda->visibleDevices, 1);  // what selectDevice picks the GPU from
  GpuProbe eight = oneGpu();
  eight.deviceCount = 8;
  auto auto8 = chooseBackend(layout::Backend::kAuto, eight, single);
  ASSERT_TRUE(auto8.isOk());
  EXPECT_EQ(auto8->device, Device::kCuda);
  EXPECT_EQ(auto8->visibleDevices, 8);
  auto autoChoice = chooseBackend(layout::Backend::kAuto, oneGpu(), single);
  ASSERT_TRUE(autoChoice.isOk());
  EXPECT_EQ(autoChoice->device, Device::kCuda);
  // Without a GPU the single-process answers are the parallel ones.
  auto none = chooseBackend(layout::Backend::kCuda, noGpu(), single);
  ASSERT_FALSE(none.isOk());
  EXPECT_EQ(none.status().code(), StatusCode::kFailedPrecondition);
  auto cpu = chooseBackend(layout::Backend::kAuto, noGpu(), single);
  ASSERT_TRUE(cpu.isOk());
  EXPECT_EQ(cpu->device, Device::kHost);
}

TEST(BackendFactory, Bf16IsForTheCudaBackendOnly) {
  EXPECT_TRUE(checkPrecision(Device::kHost, layout::Precision::kFp32).isOk());
  EXPECT_TRUE(checkPrecision(Device::kCuda, layout::Precision::kBf16).isOk());
  auto cpu = createBackend(Device::kHost, 0, layout::Precision::kBf16);
  ASSERT_FALSE(cpu.isOk());
  EXPECT_EQ(cpu.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(cpu.status().message(),
            "precision bf16 needs the cuda backend; the cpu backend computes in fp32");
}

TEST(BackendFactory, ProbeNeverFailsAndTheCpuBackendIsAlwaysThere) {
  const GpuProbe probe = probeGpu();
  if (probe.haveGpu()) {
    EXPECT_FALSE(probe.firstGpu.empty());
  } else {
    EXPECT_FALSE(probe.reason.empty());
  }
  auto cpu = createBackend(Device::kHost);
  ASSERT_TRUE(cpu.isOk());
  EXPECT_EQ((*cpu)->device(), Device::kHost);
  if (!probe.haveGpu()) {
    auto cuda = createBackend(Device::kCuda);
    ASSERT_FALSE(cuda.isOk());
    EXPECT_EQ(cuda.status().code(), StatusCode::kFailedPrecondition) << cuda.status().message();
  }
}

}  // namespace
}  // namespace bubblescope::engine
