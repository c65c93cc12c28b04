// Forward and backward kernels of the CUDA backend: the GPU twins of
// engine/cpu_kernels.h, with the same contracts, shapes and maths.
//
// Conventions for every function:
// - Pointers are device pointers to contiguous row-major fp32 buffers (bf16
//   where the type says so); B batch, T time, C channels, V vocab, NH heads,
//   HS = C / NH head size, N = B * T rows, F MLP width.
// - Forward kernels overwrite their outputs; backward kernels ADD into every
//   gradient they produce (crossEntropyBackward overwrites, as on the CPU).
// - Work is queued on `stream` (or on the cuBLAS handle's stream) and is
//   asynchronous: the Status reports bad arguments and launch errors; faults
//   inside a kernel surface at the next synchronisation.
// - The per-element maths is engine/cuda/cuda_math.h. Results match the CPU
//   kernels within fp32 rounding (reduction order, fused multiply-adds):
//   tests/gpu/cuda_kernels_test.cpp states the tolerances.
// - Deterministic except embeddingBackward's dwte (atomic adds where tokens
//   repeat; the order of the additions varies from run to run).
#pragma once

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "common/status.h"
#include "engine/cuda/cuda_math.h"

namespace bubblescope::engine::cuda {

// ---- Embedding (cuda_kernels_pointwise.cu) ----------------------------------
// out (B, T, C) = wte[tokens[b, t]] (V, C) + wpe[t] (maxT, C).
// Precondition: 0 <= tokens < V, T <= maxT (not checked on the device).
Status embeddingForward(float* out, const int32_t* tokens, const float* wte, const float* wpe,
                        int64_t b, int64_t t, int64_t c, cudaStream_t stream);
// dwte (V, C) and dwpe (maxT, C) += scatter of dout (B, T, C).
Status embeddingBackward(float* dwte, float* dwpe, const float* dout, const int32_t* tokens,
                         int64_t b, int64_t t, int64_t c, cudaStream_t stream);

// ---- Pointwise (cuda_kernels_pointwise.cu) -----------------------------------
// out (n) = gelu(inp (n)), tanh approximation.
Status geluForward(float* out, const float* inp, int64_t n, cudaStream_t stream);
// dinp (n) += gelu'(inp) * dout.
Status geluBackward(float* dinp, const float* inp, const float* dout, int64_t n,
                    cudaStream_t stream);
// out (n) = a + b; out may alias a or b.
Status residualForward(float* out, const float* a, const float* b, int64_t n, cudaStream_t stream);
// da (n) += dout; db (n) += dout.
Status residualBackward(float* da, float* db, const float* dout, int64_t n, cudaStream_t stream);
// out (N, OC) += bias (OC) on every row.
Status biasForward(float* out, const float* bias, int64_t n, int64_t oc, cudaStream_t stream);
// dbias (OC) += column sums of dout (N, OC) (rows added in order: deterministic).
Status biasBackward(float* dbias, const float* dout, int64_t n, int64_t oc, cudaStream_t stream);
// out (n) = in (n) rounded to bf16 (nearest even): the bf16 copy of fp32
// master weights or activations for gemmBf16.
Status toBf16(__nv_bfloat16* out, const float* in, int64_t n, cudaStream_t stream);
// AdamW update of n elements in place (param, m, v) given grad, with the
// step's scalars from adamwScalars() (same arithmetic as engine/adamw.cpp).
Status adamwUpdate(float* param, const float* grad, float* m, float* v, int64_t n,
                   const AdamWScalars& scalars, cudaStream_t stream);

// ---- Layer norm (cuda_kernels_layernorm.cu) ----------------------------------
// out (N, C) = (inp - mean) * rstd * weight (C) + bias (C); keeps mean (N) and
// rstd (N) = 1 / sqrt(var + 1e-5) (biased variance) for the backward.
Status layerNormForward(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                        const float* bias, int64_t n, int64_t c, cudaStream_t stream);
// dinp (N, C), dweight (C), dbias (C) += gradients given dout (N, C).
Status layerNormBackward(float* dinp, float* dweight, float* dbias, const float* dout,
                         const float* inp, const float* weight, const float* mean,
                         const float* rstd, int64_t n, int64_t c, cudaStream_t stream);
// Its two halves (layerNormBackward is exactly the two in a row):
// dinp (N, C) += input gradient (zero-bubble "B"); dweight (C), dbias (C) +=
// parameter gradients, reading no weight values (zero-bubble "W").
Status layerNormBackwardInput(float* dinp, const float* dout, const float* inp, const float* weight,
                              const float* mean, const float* rstd, int64_t n, int64_t c,
                              cudaStream_t stream);
Status layerNormBackwardWeight(float* dweight, float* dbias, const float* dout, const float* inp,
                               const float* mean, const float* rstd, int64_t n, int64_t c,
                               cudaStream_t stream);

// ---- Linear layer (cuda_linear.cpp; cuBLAS, on the handle's stream) ----------
// out (N, OC) = inp (N, IC) · weight (OC, IC)^T + bias (OC); bias may be null.
Status linearForward(cublasHandle_t handle, float* out, const float* inp, const float* weight,
                     const float* bias, int64_t n, int64_t ic, int64_t oc);
// dinp (N, IC) += dout (N, OC) · weight (OC, IC). (Zero-bubble "B" half.)
Status linearBackwardInput(cublasHandle_t handle, float* dinp, const float* dout,
                           const float* weight, int64_t n, int64_t ic, int64_t oc);
// dweight (OC, IC) += dout^T · inp; dbias (OC) += column sums of dout; dbias
// may be null. (Zero-bubble "W" half.)
Status linearBackwardWeight(cublasHandle_t handle, float* dweight, float* dbias, const float* dout,
                            const float* inp, int64_t n, int64_t ic, int64_t oc);
// bf16 operands, fp32 accumulation and fp32 results (outputs and gradients
// stay fp32; weights are bf16 copies of fp32 master weights). The bias
// gradient needs fp32 dout: use biasBackward.
Status linearForwardBf16(cublasHandle_t handle, float* out, const __nv_bfloat16* inp,
                         const __nv_bfloat16* weight, const float* bias, int64_t n, int64_t ic,
                         int64_t oc);
Status linearBackwardInputBf16(cublasHandle_t handle, float* dinp, const __nv_bfloat16* dout,
                               const __nv_bfloat16* weight, int64_t n, int64_t ic, int64_t oc);
Status linearBackwardWeightBf16(cublasHandle_t handle, float* dweight, const __nv_bfloat16* dout,
                                const __nv_bfloat16* inp, int64_t n, int64_t ic, int64_t oc);

// ---- Causal multi-head attention (cuda_kernels_attention.cu) ------------------
// qkv (B, T, 3C) holds q | k | v, head h at columns [h*HS, (h+1)*HS) of each.
// att (B, NH, T, T) receives the softmax probabilities of q k^T / sqrt(HS)
// (zero above the diagonal); out (B, T, C) = att · v per head, heads side by
// side. Scores and products through cuBLAS (strided batches over heads).
Status attentionForward(cublasHandle_t handle, float* out, float* att, const float* qkv, int64_t b,
                        int64_t t, int64_t c, int64_t nh);
// dqkv (B, T, 3C) += gradient given dout (B, T, C); scratch (NH, T, T) is
// overwritten (the CPU kernel's scratch is (T, T): the GPU does all heads of
// a sequence at once).
Status attentionBackward(cublasHandle_t handle, float* dqkv, float* scratch, const float* dout,
                         const float* qkv, const float* att, int64_t b, int64_t t, int64_t c,
                         int64_t nh);

// ---- Softmax cross-entropy (cuda_kernels_cross_entropy.cu) -------------------
// In place: logits (N, V) become probabilities; losses (N) = -log p[target].
// Precondition: 0 <= targets < V (not checked on the device).
Status crossEntropyForward(float* probsInOut, float* losses, const int32_t* targets, int64_t n,
                           int64_t v, cudaStream_t stream);
// In place: probs (N, V) become dlogits = (probs - onehot(target)) * dloss.
// Overwrites (the buffer is consumed), as the CPU kernel.
Status crossEntropyBackward(float* probsToDlogits, const int32_t* targets, float dloss, int64_t n,
                            int64_t v, cudaStream_t stream);

// ---- Fill and sums (cuda_kernels_reduce.cu) ------------------------------------
// x (n) = value.
Status fill(float* x, float value, int64_t n, cudaStream_t stream);
// *out (one double on the device) = sum of x (n), or of x^2 when squares,
// accumulated in double in a fixed order (deterministic for a given n).
// partials is device scratch of kSumPartials doubles.
inline constexpr int kSumPartials = 1024;
Status sumDouble(double* out, double* partials, const float* x, int64_t n, bool squares,
                 cudaStream_t stream);

}  // namespace bubblescope::engine::cuda
