// Helpers of the GPU kernel tests: a fixture that skips without a GPU and
// owns a CudaContext, a DeviceAllocator and the buffers a test uploads, and
// the tolerance check every comparison with the CPU backend uses.
//
// Tolerance (fp32): |gpu - cpu| <= rtol * (|cpu| + max|cpu|) per element,
// i.e. relative to the element with a floor at the tensor's scale, so values
// near zero after cancellation do not demand more than fp32 can give.
#pragma once

#include <cuda_bf16.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "engine/cuda/cuda_context.h"
#include "engine/cuda/device_allocator.h"
#include "engine/cuda/device_buffer.h"

namespace bubblescope::engine::cuda::testing {

inline std::vector<float> randomFloats(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

inline std::vector<int32_t> randomTokens(size_t n, int32_t v, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int32_t> dist(0, v - 1);
  std::vector<int32_t> out(n);
  for (int32_t& x : out) x = dist(gen);
  return out;
}

// Host rounding to bf16 and back (nearest even), as toBf16 does on the device.
inline std::vector<float> roundToBf16(const std::vector<float>& x) {
  std::vector<float> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = __bfloat162float(__float2bfloat16_rn(x[i]));
  return out;
}

// Expects gpu ~ cpu element by element (see the tolerance above); names the
// first few mismatches and the largest error.
inline void expectClose(const std::string& what, const std::vector<float>& gpu,
                        const std::vector<float>& cpu, float rtol) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  float scale = 0.0f;
  for (float x : cpu) scale = std::max(scale, std::abs(x));
  int failures = 0;
  float worst = 0.0f;
  for (size_t i = 0; i < cpu.size(); ++i) {
    const float err = std::abs(gpu[i] - cpu[i]);
    worst = std::max(worst, err / (scale > 0.0f ? scale : 1.0f));
    if (!(err <= rtol * (std::abs(cpu[i]) + scale))) {
      if (++failures <= 5) {
        ADD_FAILURE() << what << "[" << i << "]: gpu " << gpu[i] << " cpu " << cpu[i];
      }
    }
  }
  EXPECT_EQ(failures, 0) << what << ": " << failures << " of " << cpu.size()
                         << " outside tolerance; largest error / max|cpu| = " << worst;
  EXPECT_GT(scale, 0.0f) << what << " is all zeros: the comparison would be void";
}

class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!haveGpu()) GTEST_SKIP() << "no GPU";
    auto ctx = CudaContext::create(0);
    ASSERT_TRUE(ctx.isOk()) << ctx.status().message();
    ctx_ = std::move(*ctx);
  }

  cudaStream_t stream() const { return ctx_->stream(); }
  cublasHandle_t cublas() const { return ctx_->cublas(); }

  // Device copies that live until the end of the test.
  float* upload(const std::vector<float>& host) { return keep(floats_, host); }
  int32_t* upload(const std::vector<int32_t>& host) { return keep(ints_, host); }
  __nv_bfloat16* uploadBf16(const std::vector<float>& host) {
    std::vector<__nv_bfloat16> b(host.size());
    for (size_t i = 0; i < host.size(); ++i) b[i] = __float2bfloat16_rn(host[i]);
    return keep(bf16s_, b);
  }
  __nv_bfloat16* allocBf16(size_t n) { return keep(bf16s_, std::vector<__nv_bfloat16>(n)); }

  // Waits for the stream, then copies n elements back.
  template <class T>
  std::vector<T> download(const T* device, size_t n) {
    std::vector<T> host(n);
    EXPECT_TRUE(ctx_->synchronize().isOk());
    EXPECT_EQ(cudaMemcpy(host.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return host;
  }

  std::unique_ptr<CudaContext> ctx_;
  DeviceAllocator allocator_;

 private:
  template <class T>
  T* keep(std::vector<DeviceBuffer<T>>& store, const std::vector<T>& host) {
    auto b = DeviceBuffer<T>::fromHost(&allocator_, std::span<const T>(host),
                                       MemoryCategory::kActivations);
    EXPECT_TRUE(b.isOk()) << b.status().message();
    if (!b.isOk()) return nullptr;
    store.push_back(std::move(*b));
    return store.back().data();
  }
  std::vector<DeviceBuffer<float>> floats_;
  std::vector<DeviceBuffer<int32_t>> ints_;
  std::vector<DeviceBuffer<__nv_bfloat16>> bf16s_;
};

// ASSERT on a Status with its message.
#define BS_ASSERT_OK(expr)                                   \
  do {                                                       \
    const ::bubblescope::Status s_ = (expr);                 \
    ASSERT_TRUE(s_.isOk()) << #expr << ": " << s_.message(); \
  } while (0)

}  // namespace bubblescope::engine::cuda::testing
