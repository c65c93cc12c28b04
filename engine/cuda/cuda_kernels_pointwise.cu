// Elementwise kernels: embedding, GELU, residual, bias, bf16 conversion,
// AdamW. One thread per element, grid-stride loops.
#include "engine/cuda/cuda_check.h"
#include "engine/cuda/cuda_kernels.h"
#include "engine/cuda/kernel_launch.h"

namespace bubblescope::engine::cuda {
namespace {

__global__ void embeddingForwardKernel(float* out, const int32_t* tokens, const float* wte,
                                       const float* wpe, int64_t t, int64_t c, int64_t total) {
  for (int64_t idx = gridStart(); idx < total; idx += gridStride()) {
    const int64_t row = idx / c, i = idx % c;  // row = b * T + t
    out[idx] = wte[static_cast<int64_t>(tokens[row]) * c + i] + wpe[(row % t) * c + i];
  }
}

// dwte: atomic scatter (tokens repeat).
__global__ void embeddingTokenGradKernel(float* dwte, const float* dout, const int32_t* tokens,
                                         int64_t c, int64_t total) {
  for (int64_t idx = gridStart(); idx < total; idx += gridStride()) {
    const int64_t row = idx / c, i = idx % c;
    atomicAdd(&dwte[static_cast<int64_t>(tokens[row]) * c + i], dout[idx]);
  }
}

// dwpe (T, C): one thread per (t, i) adds the B rows in batch order, from
// the existing value, exactly as the CPU loop does.
__global__ void embeddingPositionGradKernel(float* dwpe, const float* dout, int64_t b, int64_t t,
                                            int64_t c) {
  for (int64_t idx = gridStart(); idx < t * c; idx += gridStride()) {
    float acc = dwpe[idx];
    for (int64_t bi = 0; bi < b; ++bi) acc += dout[bi * t * c + idx];
    dwpe[idx] = acc;
  }
}

__global__ void geluForwardKernel(float* out, const float* inp, int64_t n) {
  for (int64_t i = gridStart(); i < n; i += gridStride()) out[i] = gelu(inp[i]);
}

__global__ void geluBackwardKernel(float* dinp, const float* inp, const float* dout, int64_t n) {
  for (int64_t i = gridStart(); i < n; i += gridStride()) dinp[i] += geluGrad(inp[i]) * dout[i];
}

__global__ void residualForwardKernel(float* out, const float* a, const float* b, int64_t n) {
  for (int64_t i = gridStart(); i < n; i += gridStride()) out[i] = a[i] + b[i];
}

__global__ void residualBackwardKernel(float* da, float* db, const float* dout, int64_t n) {
  for (int64_t i = gridStart(); i < n; i += gridStride()) {
    const float d = dout[i];
    da[i] += d;
    db[i] += d;
  }
}

__global__ void biasForwardKernel(float* out, const float* bias, int64_t oc, int64_t total) {
  for (int64_t idx = gridStart(); idx < total; idx += gridStride()) out[idx] += bias[idx % oc];
}

// Block (32, 32) per tile of 32 columns: thread (x, y) sums rows y, y + 32,
// ... of column x; row y == 0 then adds the 32 partial sums in order.
__global__ void biasBackwardKernel(float* dbias, const float* dout, int64_t n, int64_t oc) {
  __shared__ float partial[kWarp][kWarp + 1];
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kWarp + threadIdx.x;
  float acc = 0.0f;
  if (col < oc) {
    for (int64_t r = threadIdx.y; r < n; r += kWarp) acc += dout[r * oc + col];
  }
  partial[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && col < oc) {
    float sum = 0.0f;
    for (int y = 0; y < kWarp; ++y) sum += partial[y][threadIdx.x];
    dbias[col] += sum;
  }
}

__global__ void toBf16Kernel(__nv_bfloat16* out, const float* in, int64_t n) {
  for (int64_t i = gridStart(); i < n; i += gridStride()) out[i] = __float2bfloat16_rn(in[i]);
}

__global__ void adamwKernel(float* param, const float* grad, float* m, float* v, int64_t n,
                            AdamWScalars s) {
  for (int64_t i = gridStart(); i < n; i += gridStride()) {
    float p = param[i], mi = m[i], vi = v[i];
    adamwElement(p, grad[i], mi, vi, s);
    param[i] = p;
    m[i] = mi;
    v[i] = vi;
  }
}

}  // namespace

Status embeddingForward(float* out, const int32_t* tokens, const float* wte, const float* wpe,
                        int64_t b, int64_t t, int64_t c, cudaStream_t stream) {
  const int64_t total = b * t * c;
  if (total == 0) return Status::ok();
  embeddingForwardKernel<<<blocksFor(total), kThreads, 0, stream>>>(out, tokens, wte, wpe, t, c,
                                                                    total);
  BS_CUDA_CHECK_LAUNCH();
  return Status::ok();
}

Status embeddingBackward(float* dwte, float* dwpe, const float* dout, const int32_t* tokens,
                         int64_t b, int64_t t, int64_t c, cudaStream_t stream) {
  const int64_t total = b * t * c;
  if (total == 0) return Status::ok();
  embeddingTokenGradKernel<<<blocksFor(total), kThreads, 0, stream>>>(dwte, dout, tokens, c, total);
  BS_CUDA_CHECK_LAUNCH();
  embeddingPositionGradKernel<<<blocksFor(t * c), kThreads, 0, stream>>>(dwpe, dout, b, t, c);
  BS_CUDA_CHECK_LAUNCH();
  return Status::ok();
}

Status geluForward(float* out, const float* inp, int64_t n, cudaStream_t stream) {
  if (n == 0) return Status::ok();
  geluForwardKernel<<<blocksFor(n), kThreads, 0, stream>>>(out, inp, n);
  BS_CUDA_CHECK_LAUNCH();
  return Status::ok();
}

Status geluBackward(float* dinp, const float* inp, const float* dout, int64_t n,
                    cudaStream_t stream) {
  if (n == 0) return Status::ok();
  geluBackwardKernel<<<blocksFor(n), kThreads, 0, stream>>>(dinp, inp, dout, n);
  BS_CUDA_CHECK_LAUNCH();
  return Status::ok();
}

Status residualForward(float* out, const float* a, const float* b, int64_t n, cudaStream_t stream) {
  if (n == 0) return Status::ok();
  residualForwardKernel<<<blocksFor(n), kThreads, 0, stream>>>(out, a, b, n);
  BS_CUDA_CHECK_LAUNCH();
  return Status::ok();
}

Status residualBackward(float* da, float* db, const float* dout, int64_t n, cudaStream_t stream) {
  if (n == 0) return Status::ok();
  residualBackwardKernel<<<blocksFor(n), kThreads, 0, stream>>>(da, db, dout, n);
  BS_CUDA_CHECK_LAUNCH();
  return Status::ok();
}

Status biasForward(float* out, const float* bias, int64_t n, int64_t oc, cudaStream_t stream) {
  const int64_t total = n * oc;
  if (total == 0) return Status::ok();
  biasForwardKernel<<<blocksFor(total), kThreads, 0, stream>>>(out, bias, oc, total);
  BS_CUDA_CHECK_LAUNCH();
  return Status::ok();
}

Status biasBackward(float* dbias, const float* dout, int64_t n, int64_t oc, cudaStream_t stream) {
  if (n == 0 || oc == 0) return Status::ok();
  const dim3 block(kWarp, kWarp);
  const unsigned grid = static_cast<unsigned>((oc + kWarp - 1) / kWarp);
  biasBackwardKernel<<<grid, block, 0, stream>>>(dbias, dout, n, oc);
  BS_CUDA_CHECK_LAUNCH();
  return Status::ok();
}

Status toBf16(__nv_bfloat16* out, const float* in, int64_t n, cudaStream_t stream) {
  if (n == 0) return Status::ok();
  toBf16Kernel<<<blocksFor(n), kThreads, 0, stream>>>(out, in, n);
  BS_CUDA_CHECK_LAUNCH();
  return Status::ok();
}

Status adamwUpdate(float* param, const float* grad, float* m, float* v, int64_t n,
                   const AdamWScalars& scalars, cudaStream_t stream) {
  if (n == 0) return Status::ok();
  adamwKernel<<<blocksFor(n), kThreads, 0, stream>>>(param, grad, m, v, n, scalars);
  BS_CUDA_CHECK_LAUNCH();
  return Status::ok();
}

}  // namespace bubblescope::engine::cuda
