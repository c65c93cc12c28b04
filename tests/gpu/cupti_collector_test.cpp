// Needs a GPU: skips cleanly without one (label gpu; scripts/gpu-check.sh).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "tracer/clock.h"
#include "tracer/cupti_collector.h"

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
    const Event e = toEvent(a, *map, 0, {});
    EXPECT_GE(e.startNs, before - 100000);
    EXPECT_LE(e.endNs, after + 100000);
    EXPECT_GT(e.endNs, e.startNs);
  }
  EXPECT_TRUE(found);
  cudaFree(p);
}

}  // namespace
}  // namespace bubblescope::tracer
