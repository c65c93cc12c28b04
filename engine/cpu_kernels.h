// Forward and backward kernels of the CPU backend, written by hand (no
// autograd), in the spirit of llm.c's train_gpt2.c.
//
// Conventions for every kernel:
// - Buffers are contiguous row-major; B batch, T time, C channels, V vocab,
//   NH heads, HS = C / NH head size, N = B * T rows, F MLP width.
// - Forward kernels overwrite their outputs.
// - Backward kernels ADD into every gradient they produce (inputs and
//   parameters), so callers zero gradients once and branches (the residual
//   stream) accumulate naturally.
// - Templated on the scalar: float trains, double is the finite-difference
//   reference (instantiated for both in cpu_kernels_*.cpp).
// - Single-threaded; no allocation except where noted.
#pragma once

#include <cstdint>

namespace bubblescope::engine::kernels {

// ---- Embedding (cpu_kernels_embedding.cpp) ----------------------------------
// out (B, T, C) = wte[tokens[b, t]] (V, C) + wpe[t] (maxT, C).
// Precondition: 0 <= tokens < V, T <= maxT.
template <class S>
void embeddingForward(S* out, const int32_t* tokens, const S* wte, const S* wpe, int64_t b,
                      int64_t t, int64_t c);
// dwte (V, C) and dwpe (maxT, C) += scatter of dout (B, T, C).
template <class S>
void embeddingBackward(S* dwte, S* dwpe, const S* dout, const int32_t* tokens, int64_t b, int64_t t,
                       int64_t c);

// ---- Layer norm (cpu_kernels_layernorm.cpp) ---------------------------------
// out (N, C) = (inp - mean) * rstd * weight (C) + bias (C); keeps mean (N) and
// rstd (N) = 1 / sqrt(var + 1e-5) (biased variance) for the backward.
template <class S>
void layerNormForward(S* out, S* mean, S* rstd, const S* inp, const S* weight, const S* bias,
                      int64_t n, int64_t c);
// dinp (N, C), dweight (C), dbias (C) += gradients given dout (N, C).
template <class S>
void layerNormBackward(S* dinp, S* dweight, S* dbias, const S* dout, const S* inp, const S* weight,
                       const S* mean, const S* rstd, int64_t n, int64_t c);
// The two halves of layerNormBackward, each bit-identical to its part of it.
// dinp (N, C) += gradient given dout (N, C). (Zero-bubble "B" half.)
template <class S>
void layerNormBackwardInput(S* dinp, const S* dout, const S* inp, const S* weight, const S* mean,
                            const S* rstd, int64_t n, int64_t c);
// dweight (C), dbias (C) += gradients given dout (N, C); reads no weight
// values. (Zero-bubble "W" half.)
template <class S>
void layerNormBackwardWeight(S* dweight, S* dbias, const S* dout, const S* inp, const S* mean,
                             const S* rstd, int64_t n, int64_t c);

// ---- Linear layer (cpu_kernels_linear.cpp) ----------------------------------
// out (N, OC) = inp (N, IC) · weight (OC, IC)^T + bias (OC); bias may be null.
template <class S>
void linearForward(S* out, const S* inp, const S* weight, const S* bias, int64_t n, int64_t ic,
                   int64_t oc);
// dinp (N, IC) += dout (N, OC) · weight (OC, IC). (Zero-bubble "B" half.)
template <class S>
void linearBackwardInput(S* dinp, const S* dout, const S* weight, int64_t n, int64_t ic,
                         int64_t oc);
// dweight (OC, IC) += dout^T · inp; dbias (OC) += column sums of dout; dbias
// may be null. (Zero-bubble "W" half.)
template <class S>
void linearBackwardWeight(S* dweight, S* dbias, const S* dout, const S* inp, int64_t n, int64_t ic,
                          int64_t oc);

// ---- Causal multi-head attention (cpu_kernels_attention.cpp) -----------------
// qkv (B, T, 3C) holds q | k | v, head h at columns [h*HS, (h+1)*HS) of each.
// att (B, NH, T, T) receives the softmax probabilities (zero above the
// diagonal); out (B, T, C) = att · v per head, heads side by side. Only the
// causal part is multiplied: blocks of query rows against the keys they see
// (about half the FLOPs of the full T x T products at long T).
template <class S>
void attentionForward(S* out, S* att, const S* qkv, int64_t b, int64_t t, int64_t c, int64_t nh);
// dqkv (B, T, 3C) += gradient given dout (B, T, C); scratch (T, T) is
// overwritten in its causal blocks (caller-provided so the kernel does not
// allocate).
template <class S>
void attentionBackward(S* dqkv, S* scratch, const S* dout, const S* qkv, const S* att, int64_t b,
                       int64_t t, int64_t c, int64_t nh);

// ---- Pointwise (cpu_kernels_pointwise.cpp) -----------------------------------
// GELU, tanh approximation (as GPT-2): out (n) = gelu(inp (n)).
template <class S>
void geluForward(S* out, const S* inp, int64_t n);
// dinp (n) += gelu'(inp) * dout.
template <class S>
void geluBackward(S* dinp, const S* inp, const S* dout, int64_t n);
// out (n) = a + b; out may alias a or b.
template <class S>
void residualForward(S* out, const S* a, const S* b, int64_t n);
// da (n) += dout; db (n) += dout.
template <class S>
void residualBackward(S* da, S* db, const S* dout, int64_t n);

// ---- Softmax cross-entropy (cpu_kernels_cross_entropy.cpp) -------------------
// In place: logits (N, V) become probabilities; losses (N) = -log p[target].
// Precondition: 0 <= targets < V.
template <class S>
void crossEntropyForward(S* probsInOut, S* losses, const int32_t* targets, int64_t n, int64_t v);
// In place: probs (N, V) become dlogits = (probs - onehot(target)) * dloss,
// where every row's loss has the same weight dloss (e.g. 1 / N for a mean).
// Unlike the other backward kernels it overwrites (the buffer is consumed).
template <class S>
void crossEntropyBackward(S* probsToDlogits, const int32_t* targets, S dloss, int64_t n, int64_t v);

}  // namespace bubblescope::engine::kernels
