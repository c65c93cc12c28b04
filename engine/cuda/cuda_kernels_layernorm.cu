// Layer norm forward and backward: one warp per row for the row statistics
// and the input gradient; a column-tiled kernel for the weight and bias
// gradients (rows added in a fixed order: deterministic).
#include "engine/cuda/cuda_check.h"
#include "engine/cuda/cuda_kernels.h"
#include "engine/cuda/kernel_launch.h"

namespace bubblescope::engine::cuda {
namespace {

constexpr int kRowsPerBlock = kThreads / kWarp;

// Two passes over the row (mean, then the biased variance around it) like
// the CPU kernel, with each sum split over the lanes of a warp.
__global__ void layerNormForwardKernel(float* out, float* mean, float* rstd, const float* inp,
                                       const float* weight, const float* bias, int64_t n,
                                       int64_t c) {
  const int lane = threadIdx.x % kWarp;
  for (int64_t row = warpRowStart(); row < n; row += warpRowStride()) {
    const float* x = inp + row * c;  // (C)
    float* o = out + row * c;        // (C)
    float sum = 0.0f;
    for (int64_t i = lane; i < c; i += kWarp) sum += x[i];
    const float m = warpSum(sum) / static_cast<float>(c);
    float sq = 0.0f;
    for (int64_t i = lane; i < c; i += kWarp) sq += (x[i] - m) * (x[i] - m);
    const RowStats s{m, layerNormRstd(warpSum(sq) / static_cast<float>(c))};
    for (int64_t i = lane; i < c; i += kWarp) o[i] = layerNormOut(x[i], s, weight[i], bias[i]);
    if (lane == 0) {
      mean[row] = s.mean;
      rstd[row] = s.rstd;
    }
  }
}

// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dout * weight.
__global__ void layerNormInputGradKernel(float* dinp, const float* dout, const float* inp,
                                         const float* weight, const float* mean, const float* rstd,
                                         int64_t n, int64_t c) {
  const int lane = threadIdx.x % kWarp;
  for (int64_t row = warpRowStart(); row < n; row += warpRowStride()) {
    const float* x = inp + row * c;   // (C)
    const float* d = dout + row * c;  // (C)
    float* dx = dinp + row * c;       // (C)
    const float m = mean[row], s = rstd[row];
    float gSum = 0.0f, gxSum = 0.0f;
    for (int64_t i = lane; i < c; i += kWarp) {
      const float xhat = (x[i] - m) * s;
      const float g = d[i] * weight[i];
      gSum += g;
      gxSum += g * xhat;
    }
    const float gMean = warpSum(gSum) / static_cast<float>(c);
    const float gxMean = warpSum(gxSum) / static_cast<float>(c);
    for (int64_t i = lane; i < c; i += kWarp) {
      const float xhat = (x[i] - m) * s;
      dx[i] += layerNormInputGrad(d[i] * weight[i], xhat, s, gMean, gxMean);
    }
  }
}

// dweight (C) += sum_r dout * xhat, dbias (C) += sum_r dout. Block (32, 32)
// per tile of 32 columns; thread (x, y) takes rows y, y + 32, ...
__global__ void layerNormParamGradKernel(float* dweight, float* dbias, const float* dout,
                                         const float* inp, const float* mean, const float* rstd,
                                         int64_t n, int64_t c) {
  __shared__ float partialW[kWarp][kWarp + 1];
  __shared__ float partialB[kWarp][kWarp + 1];
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kWarp + threadIdx.x;
  float accW = 0.0f, accB = 0.0f;
  if (col < c) {
    for (int64_t r = threadIdx.y; r < n; r += kWarp) {
      const float d = dout[r * c + col];
      accW += d * ((inp[r * c + col] - mean[r]) * rstd[r]);
      accB += d;
    }
  }
  partialW[threadIdx.y][threadIdx.x] = accW;
  partialB[threadIdx.y][threadIdx.x] = accB;
  __syncthreads();
  if (threadIdx.y == 0 && col < c) {
    float sumW = 0.0f, sumB = 0.0f;
    for (int y = 0; y < kWarp; ++y) {
      sumW += partialW[y][threadIdx.x];
      sumB += partialB[y][threadIdx.x];
    }
    dweight[col] += sumW;
    dbias[col] += sumB;
  }
}

}  // namespace

Status layerNormForward(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                        const float* bias, int64_t n, int64_t c, cudaStream_t stream) {
  if (n == 0 || c == 0) return Status::ok();
  layerNormForwardKernel<<<blocksFor(n, kRowsPerBlock), kThreads, 0, stream>>>(out, mean, rstd, inp,
                                                                               weight, bias, n, c);
  BS_CUDA_CHECK_LAUNCH();
  return Status::ok();
}

Status layerNormBackwardInput(float* dinp, const float* dout, const float* inp, const float* weight,
                              const float* mean, const float* rstd, int64_t n, int64_t c,
                              cudaStream_t stream) {
  if (n == 0 || c == 0) return Status::ok();
  layerNormInputGradKernel<<<blocksFor(n, kRowsPerBlock), kThreads, 0, stream>>>(
      dinp, dout, inp, weight, mean, rstd, n, c);
  BS_CUDA_CHECK_LAUNCH();
  return Status::ok();
}

Status layerNormBackwardWeight(float* dweight, float* dbias, const float* dout, const float* inp,
                               const float* mean, const float* rstd, int64_t n, int64_t c,
                               cudaStream_t stream) {
  if (n == 0 || c == 0) return Status::ok();
  const unsigned tiles = static_cast<unsigned>((c + kWarp - 1) / kWarp);
  layerNormParamGradKernel<<<tiles, dim3(kWarp, kWarp), 0, stream>>>(dweight, dbias, dout, inp,
                                                                     mean, rstd, n, c);
  BS_CUDA_CHECK_LAUNCH();
  return Status::ok();
}

Status layerNormBackward(float* dinp, float* dweight, float* dbias, const float* dout,
                         const float* inp, const float* weight, const float* mean,
                         const float* rstd, int64_t n, int64_t c, cudaStream_t stream) {
  BS_RETURN_IF_ERROR(layerNormBackwardInput(dinp, dout, inp, weight, mean, rstd, n, c, stream));
  return layerNormBackwardWeight(dweight, dbias, dout, inp, mean, rstd, n, c, stream);
}

}  // namespace bubblescope::engine::cuda
