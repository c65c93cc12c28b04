// Activations of one micro-batch through a GptModel (or a range of its layers).
//
// Contract: created by GptModelT::newActivations() for one (B, T); the model
// writes them in forward() and reads (and partly consumes) them in
// backward() (or backwardInput() then backwardWeight()), so each backward
// needs its own forward first. One
// ActivationsT per in-flight micro-batch lets a pipeline schedule keep several
// alive. Buffers count as MemoryCategory::kActivations and live in the
// model's backend memory (the token ids and targets too, as int32 tensors).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/layout/model_config.h"
#include "engine/moe_activations.h"
#include "engine/tensor.h"

namespace bubblescope::engine {

// What one transformer block keeps for its backward pass.
template <class S>
struct BlockActivationsT {
  TensorT<S> ln1;          // (B, T, C)
  TensorT<S> ln1Mean;      // (B, T)
  TensorT<S> ln1Rstd;      // (B, T)
  TensorT<S> qkv;          // (B, T, 3C/P) this tp rank's heads: q | k | v (P = tp size)
  TensorT<S> att;          // (B, NH/P, T, T) softmax probabilities
  TensorT<S> attY;         // (B, T, C/P) attention output before the projection
  TensorT<S> res1;         // (B, T, C) x + attention branch
  TensorT<S> ln2;          // (B, T, C)
  TensorT<S> ln2Mean;      // (B, T)
  TensorT<S> ln2Rstd;      // (B, T)
  TensorT<S> fc;           // (B, T, F/P) (empty in an MoE block)
  TensorT<S> fcGelu;       // (B, T, F/P) (empty in an MoE block)
  TensorT<S> out;          // (B, T, C) res1 + MLP branch: the block's output
  MoeActivationsT<S> moe;  // an MoE block's routing and experts (else empty)
};

// What the output head (final layer norm, projection, loss) keeps.
template <class S>
struct HeadActivationsT {
  TensorT<S> lnf;      // (B, T, C)
  TensorT<S> lnfMean;  // (B, T)
  TensorT<S> lnfRstd;  // (B, T)
  TensorT<S> probs;    // (B, T, V) logits, then probabilities; dlogits in backward
  TensorT<S> losses;   // (B, T)
};

// Gradient buffers of the backward pass, reused layer after layer.
template <class S>
struct BackwardScratchT {
  TensorT<S> dRes1;     // (B, T, C)
  TensorT<S> dLn;       // (B, T, C) gradient of ln_1's (or ln_f's) output
  TensorT<S> dLn2;      // (B, T, C) gradient of ln_2's output
  TensorT<S> dQkv;      // (B, T, 3C/P)
  TensorT<S> dAttY;     // (B, T, C/P)
  TensorT<S> dAtt;      // attention's backward scratch: attentionScratchShape(T, NH/P)
  TensorT<S> dFc;       // (B, T, F/P)
  TensorT<S> dFcGelu;   // (B, T, F/P)
  TensorT<S> dStreamA;  // (B, T, C) gradient of the residual stream (ping)
  TensorT<S> dStreamB;  // (B, T, C) (pong)
  MoeGradKeepT<S> moe;  // an MoE block's gradients (when the range has one)
};

// What backwardInput() ("B") keeps for backwardWeight() ("W") of one block:
// the gradients of the outputs of its linear layers and layer norms.
template <class S>
struct BlockGradKeepT {
  TensorT<S> dOut;      // (B, T, C) gradient of the block output (mlp.proj's output)
  TensorT<S> dFc;       // (B, T, F/P) gradient of mlp.fc's output
  TensorT<S> dRes1;     // (B, T, C) gradient of attn.proj's output
  TensorT<S> dQkv;      // (B, T, 3C/P) gradient of attn.qkv's output
  TensorT<S> dLn2;      // (B, T, C) gradient of ln_2's output
  TensorT<S> dLn1;      // (B, T, C) gradient of ln_1's output
  MoeGradKeepT<S> moe;  // an MoE block's: router logits' and experts' gradients
};

// Everything W needs besides the forward activations (the head's dlogits
// stay in head.probs). Allocated (kActivations) by the first backwardInput()
// over these activations, so runs that never split backward pay nothing.
template <class S>
struct WeightGradKeepT {
  std::vector<BlockGradKeepT<S>> blocks;  // one per block of the range
  TensorT<S> dLnf;                        // (B, T, C) gradient of ln_f's output
  TensorT<S> dEmbedding;                  // (B, T, C) gradient of the embedding output
  bool allocated = false;
};

template <class S>
struct ActivationsT {
  int64_t batch = 0;                         // B
  int64_t seq = 0;                           // T
  TensorT<int32_t> tokens;                   // (B, T) when the range holds the embedding
  TensorT<int32_t> targets;                  // (B, T) when the range holds the head
  TensorT<S> input;                          // (B, T, C) embedding output or the stage input
  std::vector<BlockActivationsT<S>> blocks;  // one per block of the range
  HeadActivationsT<S> head;
  BackwardScratchT<S> scratch;
  TensorT<S> inputGrad;  // (B, T, C) gradient of the stage input (no embedding)
  WeightGradKeepT<S> keep;
  double loss = 0.0;  // mean loss of the last forward (NaN without head)
  // backwardInput() ran and backwardWeight() has not: forward() and
  // backward() refuse these activations until it does.
  bool weightGradPending = false;

  // The stage output (B, T, C): the last block's output, or the input when
  // the range has no block. Meaningful after forward().
  const TensorT<S>& output() const { return blocks.empty() ? input : blocks.back().out; }
};

using Activations = ActivationsT<float>;

}  // namespace bubblescope::engine
