// Fill and double-precision sums: the backend's fill(), sum() and
// squaredSum() (mean loss, global gradient norm).
#include "engine/cuda/cuda_check.h"
#include "engine/cuda/cuda_kernels.h"
#include "engine/cuda/kernel_launch.h"

namespace bubblescope::engine::cuda {
namespace {

constexpr int kReduceThreads = 256;

__global__ void fillKernel(float* x, float value, int64_t n) {
  for (int64_t i = gridStart(); i < n; i += gridStride()) x[i] = value;
}

// Tree sum of one block's values in shared memory, in a fixed order.
__device__ double blockSum(double v, double* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) shared[threadIdx.x] += shared[threadIdx.x + half];
    __syncthreads();
  }
  return shared[0];
}

// Pass 1: block i sums a fixed grid-stride share of x into partials[i].
__global__ void partialSumKernel(double* partials, const float* x, int64_t n, bool squares) {
  __shared__ double shared[kReduceThreads];
  double acc = 0.0;
  for (int64_t i = gridStart(); i < n; i += gridStride()) {
    const double v = static_cast<double>(x[i]);
    acc += squares ? v * v : v;
  }
  const double total = blockSum(acc, shared);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// Pass 2: one block sums the partials.
__global__ void finalSumKernel(double* out, const double* partials, int count) {
  __shared__ double shared[kReduceThreads];
  double acc = 0.0;
  for (int i = threadIdx.x; i < count; i += blockDim.x) acc += partials[i];
  const double total = blockSum(acc, shared);
  if (threadIdx.x == 0) *out = total;
}

}  // namespace

Status fill(float* x, float value, int64_t n, cudaStream_t stream) {
  if (n < 0) return Status::invalidArgument("fill: negative size");
  if (n == 0) return Status::ok();
  fillKernel<<<blocksFor(n), kThreads, 0, stream>>>(x, value, n);
  BS_CUDA_CHECK_LAUNCH();
  return Status::ok();
}

Status sumDouble(double* out, double* partials, const float* x, int64_t n, bool squares,
                 cudaStream_t stream) {
  if (n < 0) return Status::invalidArgument("sum: negative size");
  const int blocks = static_cast<int>(
      std::clamp<int64_t>((n + kReduceThreads - 1) / kReduceThreads, 1, kSumPartials));
  partialSumKernel<<<blocks, kReduceThreads, 0, stream>>>(partials, x, n, squares);
  BS_CUDA_CHECK_LAUNCH();
  finalSumKernel<<<1, kReduceThreads, 0, stream>>>(out, partials, blocks);
  BS_CUDA_CHECK_LAUNCH();
  return Status::ok();
}

}  // namespace bubblescope::engine::cuda
