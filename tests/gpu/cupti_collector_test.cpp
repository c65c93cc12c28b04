// Needs a GPU: skips cleanly without one (label gpu; scripts/gpu-check.sh).
#include "tracer/cupti_collector.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/cuda/cuda_kernels.h"
#include "storage/trace_reader.h"
#include "storage/trace_writer.h"
#include "tracer/clock.h"
#include "tracer/gpu_identity.h"
#include "tracer/nvml_sampler.h"

namespace bubblescope::tracer {
namespace {

bool haveGpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

TEST(CuptiCollectorTest, WithoutAGpuStartSaysWhy) {
  if (haveGpu()) GTEST_SKIP() << "a GPU is present";
  auto c = CuptiCollector::start();
  ASSERT_FALSE(c.isOk());
  EXPECT_NE(c.status().message().find("CUPTI tracing needs a GPU"), std::string::npos);
}

// CUPTI's own callback names (no GPU needed): the runtime's and NCCL's
// (driver) kernel launches, copies and sets are traced, nothing else.
TEST(CuptiCollectorTest, TracesTheCallsThatLaunchWorkAndNoOthers) {
  const std::vector<std::string> apis = CuptiCollector::tracedApis();
  auto traced = [&](const std::string& name) {
    return std::find(apis.begin(), apis.end(), name) != apis.end();
  };
  for (const char* name : {"cudaLaunchKernel_v7000", "cudaLaunchKernelExC_v11060",
                           "cudaMemcpy_v3020", "cudaMemcpyAsync_v3020", "cudaMemsetAsync_v3020",
                           "cuLaunchKernel", "cuLaunchKernelEx", "cuMemcpyAsync"}) {
    EXPECT_TRUE(traced(name)) << name;
  }
  for (const std::string& name : apis) EXPECT_TRUE(isLaunchApi(name)) << name;
  for (const char* name : {"cudaGetDevice_v3020", "cudaMalloc_v3020", "cudaGraphLaunch_v10000",
                           "cuCtxGetCurrent", "cuStreamWaitEvent"}) {
    EXPECT_FALSE(traced(name)) << name;
  }
  EXPECT_GT(apis.size(), 50u);
  EXPECT_LT(apis.size(), 400u);
}

TEST(CuptiCollectorTest, RecordsAMemsetAndMapsItOntoTheHostClock) {
  if (!haveGpu()) GTEST_SKIP() << "no GPU";
  auto collector = CuptiCollector::start();
  ASSERT_TRUE(collector.isOk()) << collector.status().message();
  constexpr size_t kBytes = 64 << 20;
  void* p = nullptr;
  ASSERT_EQ(cudaMalloc(&p, kBytes), cudaSuccess);
  const int64_t before = hostNowNs();
  ASSERT_EQ(cudaMemset(p, 1, kBytes), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const int64_t after = hostNowNs();
  auto pairs = (*collector)->clockPairs(8);
  auto map = fitGpuClockMap(pairs);
  ASSERT_TRUE(map.isOk()) << map.status().message();
  bool found = false;
  for (const GpuActivity& a : (*collector)->take()) {
    if (a.kind != GpuActivityKind::kMemset || a.bytes != kBytes) continue;
    found = true;
    const trace_model::Event e = toEvent(a, *map, 0, {});
    EXPECT_GE(e.startNs, before - 100000);
    EXPECT_LE(e.endNs, after + 100000);
    EXPECT_GT(e.endNs, e.startNs);
  }
  EXPECT_TRUE(found);
  cudaFree(p);
}

// A tiny kernel and a copy launched under the collector: each GPU record's
// correlation id is that of a launch call of this thread, which began before
// the record; stored through TraceWriter, the kernel event and its launch
// event are found linked by TraceReader::linkedEvents.
TEST(CuptiCollectorTest, AKernelIsLinkedToTheCallThatLaunchedIt) {
  if (!haveGpu()) GTEST_SKIP() << "no GPU";
  auto collector = CuptiCollector::start();
  ASSERT_TRUE(collector.isOk()) << collector.status().message();
  ASSERT_TRUE((*collector)->launchesTraced()) << (*collector)->launchError();
  constexpr int64_t kN = 1024;
  float* d = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), 3 * kN * sizeof(float)), cudaSuccess);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  std::vector<float> host(kN, 1.0f);
  ASSERT_EQ(cudaMemcpy(d + kN, host.data(), kN * sizeof(float), cudaMemcpyHostToDevice),
            cudaSuccess);
  ASSERT_TRUE(engine::cuda::residualForward(d, d + kN, d + kN, kN, stream).isOk());
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(host.data(), d, kN * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(host[kN - 1], 2.0f);  // the kernel really ran

  const auto launches = (*collector)->takeLaunches();
  const auto records = (*collector)->take();
  auto map = fitGpuClockMap((*collector)->clockPairs(8));
  ASSERT_TRUE(map.isOk()) << map.status().message();
  const auto me = static_cast<uint32_t>(::syscall(SYS_gettid));
  std::vector<trace_model::Event> events;
  for (const LaunchCall& l : launches) events.push_back(toEvent(l, 0));
  int kernels = 0, copies = 0;
  int64_t kernelCorrelation = 0;
  for (const GpuActivity& a : records) {
    events.push_back(toEvent(a, *map, 0, {}));
    const bool kernel =
        a.kind == GpuActivityKind::kKernel && a.name.find("residualForward") != std::string::npos;
    const bool copy = a.kind == GpuActivityKind::kMemcpy && a.bytes == kN * sizeof(float);
    if (!kernel && !copy) continue;
    kernels += kernel;
    copies += copy;
    if (kernel) kernelCorrelation = a.correlationId;
    const LaunchCall* launch = nullptr;
    for (const LaunchCall& l : launches) {
      if (l.correlationId == a.correlationId) launch = &l;
    }
    ASSERT_NE(launch, nullptr) << a.name << " correlation " << a.correlationId
                               << " has no launch among " << launches.size();
    EXPECT_TRUE(isLaunchApi(launch->name)) << launch->name;
    EXPECT_NE(launch->name.find(kernel ? "Launch" : "Memcpy"), std::string::npos) << launch->name;
    EXPECT_EQ(launch->threadId, me);
    // The call began before its work on the GPU (the fitted map is good to
    // well under the 20 µs allowed here).
    EXPECT_LE(launch->startNs, map->toHost(a.gpuStartNs) + 20000) << launch->name;
  }
  EXPECT_EQ(kernels, 1);
  EXPECT_EQ(copies, 2);
  ASSERT_NE(kernelCorrelation, 0);

  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("bubblescope-cupti-" + std::to_string(me));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "t.db").string();
  std::filesystem::remove(path);
  {
    auto writer = storage::TraceWriter::open(path);
    ASSERT_TRUE(writer.isOk()) << writer.status().message();
    ASSERT_TRUE((*writer)->beginRun({.name = "cupti", .worldSize = 1}).isOk());
    ASSERT_TRUE((*writer)->appendEvents(events).isOk());
    ASSERT_TRUE((*writer)->finishRun(storage::RunStatus::kFinished).isOk());
  }
  auto reader = storage::TraceReader::open(path);
  ASSERT_TRUE(reader.isOk()) << reader.status().message();
  auto linked = (*reader)->linkedEvents(1, 0, kernelCorrelation);
  ASSERT_TRUE(linked.isOk()) << linked.status().message();
  ASSERT_EQ(linked->size(), 2u);
  EXPECT_EQ((*linked)[0].lane, trace_model::Lane::kCudaApi);
  EXPECT_TRUE(trace_model::isGpuStreamLane((*linked)[1].lane));
  EXPECT_EQ((*linked)[1].kind, trace_model::EventKind::kKernel);
  EXPECT_EQ((*linked)[0].correlationId, (*linked)[1].correlationId);
  std::filesystem::remove_all(dir);
  cudaStreamDestroy(stream);
  cudaFree(d);
}

// streamIdOf() gives the streamId of the records of work launched on that
// stream: what tags NCCL kernels with their group's dimension.
TEST(CuptiCollectorTest, StreamIdOfIsTheStreamIdOfItsRecords) {
  if (!haveGpu()) GTEST_SKIP() << "no GPU";
  auto collector = CuptiCollector::start();
  ASSERT_TRUE(collector.isOk()) << collector.status().message();
  cudaStream_t a = nullptr, b = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking), cudaSuccess);
  auto idA = (*collector)->streamIdOf(a);
  auto idB = (*collector)->streamIdOf(b);
  ASSERT_TRUE(idA.isOk()) << idA.status().message();
  ASSERT_TRUE(idB.isOk()) << idB.status().message();
  EXPECT_NE(*idA, *idB);
  void* p = nullptr;
  ASSERT_EQ(cudaMalloc(&p, 4096), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(p, 1, 4096, b), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(b), cudaSuccess);
  bool found = false;
  for (const GpuActivity& r : (*collector)->take()) {
    if (r.kind != GpuActivityKind::kMemset || r.bytes != 4096) continue;
    found = true;
    EXPECT_EQ(r.streamId, *idB);
  }
  EXPECT_TRUE(found);
  cudaFree(p);
  cudaStreamDestroy(a);
  cudaStreamDestroy(b);
}

// The current device's PCI bus id and UUID name it in NVML (not its index).
TEST(GpuIdentityTest, TheCurrentDeviceIsFoundInNvml) {
  if (!haveGpu()) GTEST_SKIP() << "no GPU";
  auto id = currentGpuIdentity();
  ASSERT_TRUE(id.isOk()) << id.status().message();
  EXPECT_TRUE(normalisedPciBusId(id->pciBusId).isOk()) << id->pciBusId;
  EXPECT_EQ(id->uuid.rfind("GPU-", 0), 0u) << id->uuid;
  auto sampler = NvmlSampler::open(*id);
  if (!sampler.isOk() && sampler.status().code() == StatusCode::kUnsupported) {
    GTEST_SKIP() << sampler.status().message();  // no NVML library
  }
  ASSERT_TRUE(sampler.isOk()) << sampler.status().message();
  auto samples = (*sampler)->sample(0, 1);
  ASSERT_FALSE(samples.empty());
  for (const trace_model::Sample& sample : samples) EXPECT_GE(sample.value, 0.0) << sample.name;
}

}  // namespace
}  // namespace bubblescope::tracer
