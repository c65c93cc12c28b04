// Softmax cross-entropy: one block per row of logits (V up to 50257), an
// online (max, sum) pass reduced over the block, then the probabilities.
#include "engine/cuda/cuda_check.h"
#include "engine/cuda/cuda_kernels.h"
#include "engine/cuda/kernel_launch.h"

namespace bubblescope::engine::cuda {
namespace {

constexpr int kRowThreads = 512;
constexpr int kRowWarps = kRowThreads / kWarp;

__device__ inline SoftmaxState warpMerge(SoftmaxState s) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    const SoftmaxState o{__shfl_xor_sync(0xffffffffu, s.max, offset),
                         __shfl_xor_sync(0xffffffffu, s.sum, offset)};
    s = softmaxMerge(s, o);
  }
  return s;
}

// probs (N, V) in: logits; out: probabilities. losses (N).
__global__ void crossEntropyForwardKernel(float* probs, float* losses, const int32_t* targets,
                                          int64_t n, int64_t v) {
  // Plain floats: __shared__ variables cannot have initialisers.
  __shared__ float warpMaxes[kRowWarps], warpSums[kRowWarps];
  __shared__ float rowMax, rowSum;
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  for (int64_t r = blockIdx.x; r < n; r += gridDim.x) {
    float* p = probs + r * v;  // (V)
    // Read before any thread overwrites the row.
    const float targetLogit = (threadIdx.x == 0) ? p[targets[r]] : 0.0f;
    SoftmaxState s;
    for (int64_t j = threadIdx.x; j < v; j += blockDim.x) s = softmaxAdd(s, p[j]);
    s = warpMerge(s);
    if (lane == 0) {
      warpMaxes[warp] = s.max;
      warpSums[warp] = s.sum;
    }
    __syncthreads();
    if (warp == 0) {
      s = lane < kRowWarps ? SoftmaxState{warpMaxes[lane], warpSums[lane]} : SoftmaxState{};
      s = warpMerge(s);
      if (lane == 0) {
        rowMax = s.max;
        rowSum = s.sum;
      }
    }
    __syncthreads();
    const SoftmaxState row{rowMax, rowSum};
    const float inv = 1.0f / row.sum;
    for (int64_t j = threadIdx.x; j < v; j += blockDim.x) p[j] = expf(p[j] - row.max) * inv;
    if (threadIdx.x == 0) losses[r] = crossEntropyLoss(row.sum, row.max, targetLogit);
    __syncthreads();  // the shared row state is reused by the next row
  }
}

__global__ void crossEntropyBackwardKernel(float* p, const int32_t* targets, float dloss, int64_t v,
                                           int64_t total) {
  for (int64_t idx = gridStart(); idx < total; idx += gridStride()) {
    const int64_t r = idx / v, j = idx % v;
    p[idx] = crossEntropyGrad(p[idx], j == targets[r], dloss);
  }
}

}  // namespace

Status crossEntropyForward(float* probsInOut, float* losses, const int32_t* targets, int64_t n,
                           int64_t v, cudaStream_t stream) {
  if (n == 0) return Status::ok();
  if (v <= 0) return Status::invalidArgument("crossEntropyForward: V must be positive");
  crossEntropyForwardKernel<<<blocksFor(n, 1), kRowThreads, 0, stream>>>(probsInOut, losses,
                                                                         targets, n, v);
  BS_CUDA_CHECK_LAUNCH();
  return Status::ok();
}

Status crossEntropyBackward(float* probsToDlogits, const int32_t* targets, float dloss, int64_t n,
                            int64_t v, cudaStream_t stream) {
  const int64_t total = n * v;
  if (total == 0) return Status::ok();
  crossEntropyBackwardKernel<<<blocksFor(total), kThreads, 0, stream>>>(probsToDlogits, targets,
                                                                        dloss, v, total);
  BS_CUDA_CHECK_LAUNCH();
  return Status::ok();
}

}  // namespace bubblescope::engine::cuda
