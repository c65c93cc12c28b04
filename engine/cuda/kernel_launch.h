// Launch geometry and warp reductions shared by the .cu files of
// engine/cuda (internal: included by CUDA sources only).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace bubblescope::engine::cuda {

inline constexpr int kThreads = 256;  // threads per block of elementwise kernels
inline constexpr int kWarp = 32;
inline constexpr int64_t kMaxBlocks = 65535LL * 16;  // grid-stride loops cover the rest

// Blocks for `work` items at `perBlock` items per block (at least 1).
inline unsigned blocksFor(int64_t work, int64_t perBlock = kThreads) {
  return static_cast<unsigned>(
      std::clamp<int64_t>((work + perBlock - 1) / perBlock, 1, kMaxBlocks));
}

// Sum over the 32 lanes of a warp; every lane gets the result. The order of
// the additions is fixed (butterfly), so results are deterministic.
__device__ inline float warpSum(float x) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2)
    x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

__device__ inline float warpMax(float x) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, offset));
  }
  return x;
}

// First element index and stride of a grid-stride loop over a 1-D grid.
__device__ inline int64_t gridStart() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline int64_t gridStride() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

// First row and row stride of a warp-per-row loop over a 1-D grid: every
// lane of a warp takes the same rows, so warp reductions inside the loop see
// all 32 lanes (blockDim.x must be a multiple of 32).
__device__ inline int64_t warpRowStart() {
  return static_cast<int64_t>(blockIdx.x) * (blockDim.x / kWarp) + threadIdx.x / kWarp;
}
__device__ inline int64_t warpRowStride() {
  return static_cast<int64_t>(gridDim.x) * (blockDim.x / kWarp);
}

}  // namespace bubblescope::engine::cuda
