// Causal multi-head attention: scores and weighted sums through cuBLAS
// (strided batches over the heads of one sequence, on strided views of qkv),
// causal softmax and its backward as warp-per-row kernels.
#include "engine/cuda/cublas_gemm.h"
#include "engine/cuda/cuda_check.h"
#include "engine/cuda/cuda_kernels.h"
#include "engine/cuda/kernel_launch.h"

namespace bubblescope::engine::cuda {
namespace {

// rows (R, T) of scores, R = (heads) * T, row r is query i = r % T: keys
// 0..i are visible. Becomes softmax over the visible keys, zero above the
// diagonal, with the CPU kernel's passes: max, exp and sum, scale by 1/sum.
__global__ void causalSoftmaxKernel(float* att, int64_t rows, int64_t t) {
  const int lane = threadIdx.x % kWarp;
  for (int64_t r = warpRowStart(); r < rows; r += warpRowStride()) {
    float* row = att + r * t;  // (T)
    const int64_t i = r % t;
    float mx = -INFINITY;
    for (int64_t j = lane; j <= i; j += kWarp) mx = fmaxf(mx, row[j]);
    mx = warpMax(mx);
    float sum = 0.0f;
    for (int64_t j = lane; j <= i; j += kWarp) {
      const float e = expf(row[j] - mx);
      row[j] = e;
      sum += e;
    }
    const float inv = 1.0f / warpSum(sum);
    for (int64_t j = lane; j < t; j += kWarp) row[j] = (j <= i) ? row[j] * inv : 0.0f;
  }
}

// dp (R, T) becomes dS = P * (dP - rowsum(P * dP)) over the visible keys,
// zero above the diagonal; p (R, T) are the forward probabilities.
__global__ void causalSoftmaxBackwardKernel(float* dp, const float* p, int64_t rows, int64_t t) {
  const int lane = threadIdx.x % kWarp;
  for (int64_t r = warpRowStart(); r < rows; r += warpRowStride()) {
    float* drow = dp + r * t;       // (T)
    const float* prow = p + r * t;  // (T)
    const int64_t i = r % t;
    float dot = 0.0f;
    for (int64_t j = lane; j <= i; j += kWarp) dot += prow[j] * drow[j];
    dot = warpSum(dot);
    for (int64_t j = lane; j < t; j += kWarp) {
      drow[j] = (j <= i) ? softmaxGrad(prow[j], drow[j], dot) : 0.0f;
    }
  }
}

Status launchSoftmax(float* att, int64_t rows, int64_t t, cudaStream_t stream) {
  causalSoftmaxKernel<<<blocksFor(rows, kThreads / kWarp), kThreads, 0, stream>>>(att, rows, t);
  BS_CUDA_CHECK_LAUNCH();
  return Status::ok();
}

Status launchSoftmaxBackward(float* dp, const float* p, int64_t rows, int64_t t,
                             cudaStream_t stream) {
  causalSoftmaxBackwardKernel<<<blocksFor(rows, kThreads / kWarp), kThreads, 0, stream>>>(dp, p,
                                                                                          rows, t);
  BS_CUDA_CHECK_LAUNCH();
  return Status::ok();
}

Status checkHeads(int64_t c, int64_t nh) {
  if (nh <= 0 || c % nh != 0) {
    return Status::invalidArgument("attention: C = " + std::to_string(c) +
                                   " is not a multiple of NH = " + std::to_string(nh));
  }
  return Status::ok();
}

}  // namespace

Status attentionForward(cublasHandle_t handle, float* out, float* att, const float* qkv, int64_t b,
                        int64_t t, int64_t c, int64_t nh) {
  BS_RETURN_IF_ERROR(checkHeads(c, nh));
  if (b == 0 || t == 0) return Status::ok();
  cudaStream_t stream = nullptr;
  BS_CUBLAS_CHECK(cublasGetStream(handle, &stream));
  const int64_t hs = c / nh;
  const float scale = 1.0f / sqrtf(static_cast<float>(hs));
  for (int64_t bi = 0; bi < b; ++bi) {
    const float* base = qkv + bi * t * 3 * c;  // (T, 3C); head h of q at base + h*HS
    float* a = att + bi * nh * t * t;          // (NH, T, T)
    // scores_h (T, T) = scale * q_h (T, HS) k_h^T; row stride 3C, head stride HS
    BS_RETURN_IF_ERROR(gemmStridedBatched(handle, false, true, t, t, hs, scale, base, 3 * c, hs,
                                          base + c, 3 * c, hs, 0.0f, a, t, t * t, nh));
  }
  BS_RETURN_IF_ERROR(launchSoftmax(att, b * nh * t, t, stream));
  for (int64_t bi = 0; bi < b; ++bi) {
    const float* base = qkv + bi * t * 3 * c;  // (T, 3C)
    const float* a = att + bi * nh * t * t;    // (NH, T, T)
    // out_h (T, HS) = att_h (T, T) v_h (T, HS); out row stride C, head stride HS
    BS_RETURN_IF_ERROR(gemmStridedBatched(handle, false, false, t, hs, t, 1.0f, a, t, t * t,
                                          base + 2 * c, 3 * c, hs, 0.0f, out + bi * t * c, c, hs,
                                          nh));
  }
  return Status::ok();
}

// With P = att, dO = dout_h: dV += P^T dO; dP = dO V^T;
// dS = P * (dP - rowsum(P * dP)); dQ += dS K * scale; dK += dS^T Q * scale.
Status attentionBackward(cublasHandle_t handle, float* dqkv, float* scratch, const float* dout,
                         const float* qkv, const float* att, int64_t b, int64_t t, int64_t c,
                         int64_t nh) {
  BS_RETURN_IF_ERROR(checkHeads(c, nh));
  if (b == 0 || t == 0) return Status::ok();
  cudaStream_t stream = nullptr;
  BS_CUBLAS_CHECK(cublasGetStream(handle, &stream));
  const int64_t hs = c / nh;
  const float scale = 1.0f / sqrtf(static_cast<float>(hs));
  const int64_t tt = t * t;
  for (int64_t bi = 0; bi < b; ++bi) {
    const float* base = qkv + bi * t * 3 * c;  // (T, 3C)
    float* dbase = dqkv + bi * t * 3 * c;      // (T, 3C)
    const float* p = att + bi * nh * tt;       // (NH, T, T)
    const float* dO = dout + bi * t * c;       // (T, C); head h at dO + h*HS
    float* dp = scratch;                       // (NH, T, T)
    // dv_h (T, HS) += p_h^T (T, T) dO_h (T, HS)
    BS_RETURN_IF_ERROR(gemmStridedBatched(handle, true, false, t, hs, t, 1.0f, p, t, tt, dO, c, hs,
                                          1.0f, dbase + 2 * c, 3 * c, hs, nh));
    // dp_h (T, T) = dO_h (T, HS) v_h^T
    BS_RETURN_IF_ERROR(gemmStridedBatched(handle, false, true, t, t, hs, 1.0f, dO, c, hs,
                                          base + 2 * c, 3 * c, hs, 0.0f, dp, t, tt, nh));
    BS_RETURN_IF_ERROR(launchSoftmaxBackward(dp, p, nh * t, t, stream));
    // dq_h (T, HS) += scale * dS_h (T, T) k_h (T, HS)
    BS_RETURN_IF_ERROR(gemmStridedBatched(handle, false, false, t, hs, t, scale, dp, t, tt,
                                          base + c, 3 * c, hs, 1.0f, dbase, 3 * c, hs, nh));
    // dk_h (T, HS) += scale * dS_h^T (T, T) q_h (T, HS)
    BS_RETURN_IF_ERROR(gemmStridedBatched(handle, true, false, t, hs, t, scale, dp, t, tt, base,
                                          3 * c, hs, 1.0f, dbase + c, 3 * c, hs, nh));
  }
  return Status::ok();
}

}  // namespace bubblescope::engine::cuda
