// DeviceAllocator, DeviceBuffer and CudaContext. The no-GPU cases run on
// machines without a device (and skip where there is one).
#include "engine/cuda/device_allocator.h"

#include <gtest/gtest.h>

#include "engine/cuda/cuda_context.h"
#include "engine/cuda/device_buffer.h"
#include "tests/gpu/cuda_test_util.h"

namespace bubblescope::engine::cuda {
namespace {

TEST(CudaContextTest, WithoutAGpuEverythingFailsWithAStatus) {
  if (haveGpu()) GTEST_SKIP() << "a GPU is present";
  const Result<int> count = cudaDeviceCount();
  if (count.isOk()) {
    EXPECT_EQ(*count, 0);
  } else {
    EXPECT_NE(count.status().message().find("cudaGetDeviceCount"), std::string::npos);
  }
  auto ctx = CudaContext::create(0);
  ASSERT_FALSE(ctx.isOk());
  DeviceAllocator allocator;
  auto buffer = DeviceBuffer<float>::create(&allocator, 16, MemoryCategory::kParameters);
  ASSERT_FALSE(buffer.isOk());
  EXPECT_EQ(allocator.totalCurrentBytes(), 0);
  EXPECT_EQ(allocator.totalPeakBytes(), 0);
}

TEST(CudaContextTest, DescribesDeviceZero) {
  if (!haveGpu()) GTEST_SKIP() << "no GPU";
  auto d = deviceDescription(0);
  ASSERT_TRUE(d.isOk()) << d.status().message();
  EXPECT_NE(d->find("sm_"), std::string::npos) << *d;
  EXPECT_FALSE(CudaContext::create(1 << 20).isOk());  // no such device
}

using DeviceAllocatorTest = testing::CudaTest;

TEST_F(DeviceAllocatorTest, CountsBytesByCategoryWithPeaks) {
  DeviceAllocator a;
  {
    auto params = DeviceBuffer<float>::create(&a, 1000, MemoryCategory::kParameters);
    ASSERT_TRUE(params.isOk()) << params.status().message();
    auto grads = DeviceBuffer<float>::create(&a, 1000, MemoryCategory::kGradients);
    ASSERT_TRUE(grads.isOk());
    EXPECT_EQ(a.currentBytes(MemoryCategory::kParameters), 4000);
    EXPECT_EQ(a.currentBytes(MemoryCategory::kGradients), 4000);
    EXPECT_EQ(a.totalCurrentBytes(), 8000);
    {
      auto acts = DeviceBuffer<float>::create(&a, 500, MemoryCategory::kActivations);
      ASSERT_TRUE(acts.isOk());
      EXPECT_EQ(a.totalPeakBytes(), 10000);
    }
    EXPECT_EQ(a.currentBytes(MemoryCategory::kActivations), 0);
    EXPECT_EQ(a.peakBytes(MemoryCategory::kActivations), 2000);
    BS_ASSERT_OK(grads->reset());
    EXPECT_EQ(a.currentBytes(MemoryCategory::kGradients), 0);
    EXPECT_EQ(a.peakBytes(MemoryCategory::kGradients), 4000);
  }
  EXPECT_EQ(a.totalCurrentBytes(), 0);
  EXPECT_EQ(a.totalPeakBytes(), 10000);
}

TEST_F(DeviceAllocatorTest, BuffersStartZeroedAndRoundTrip) {
  auto b = DeviceBuffer<float>::create(&allocator_, 4097, MemoryCategory::kOptimizerState);
  ASSERT_TRUE(b.isOk()) << b.status().message();
  auto zeros = b->toHost();
  ASSERT_TRUE(zeros.isOk());
  for (float x : *zeros) ASSERT_EQ(x, 0.0f);
  const std::vector<float> values = testing::randomFloats(4097, 1);
  BS_ASSERT_OK(b->copyFromHost(values));
  auto back = b->toHost();
  ASSERT_TRUE(back.isOk());
  EXPECT_EQ(*back, values);
  EXPECT_FALSE(b->copyFromHost(std::vector<float>(3)).isOk());  // size mismatch
  // A move hands over the memory and its count.
  DeviceBuffer<float> moved = std::move(*b);
  EXPECT_EQ(moved.size(), 4097);
  EXPECT_EQ(allocator_.currentBytes(MemoryCategory::kOptimizerState), 4097 * 4);
}

TEST_F(DeviceAllocatorTest, AnImpossibleAllocationFailsWithAStatusAndCountsNothing) {
  DeviceAllocator a;
  auto huge = a.allocate(size_t{1} << 62, MemoryCategory::kActivations);
  ASSERT_FALSE(huge.isOk());
  EXPECT_NE(huge.status().message().find("cudaMalloc"), std::string::npos)
      << huge.status().message();
  EXPECT_EQ(a.totalCurrentBytes(), 0);
  // The error is not sticky: the device still works.
  auto ok = a.allocate(256, MemoryCategory::kActivations);
  ASSERT_TRUE(ok.isOk()) << ok.status().message();
  BS_ASSERT_OK(a.release(*ok, 256, MemoryCategory::kActivations));
}

}  // namespace
}  // namespace bubblescope::engine::cuda
