// What one mixture-of-experts feed-forward (engine/moe_layer.h) keeps
// between its forward and backward passes, and the gradients its backward
// input half ("B") keeps for its weight half ("W").
//
// Contract: sized by MoeFeedForwardT::newActivations() for N tokens and the
// capacity of N (ModelConfig::expertCapacity). Expert e's rows of the packed
// (E·cap, ...) tensors are e·cap .. e·cap + kept[e] − 1, in the order the
// tokens were placed (docs/engine.md, "Mixture of experts"). The routing
// tables are host vectors: MoE runs on host memory (the CPU backend).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/tensor.h"

namespace bubblescope::engine {

template <class S>
struct MoeActivationsT {
  int64_t tokens = 0;    // N
  int64_t capacity = 0;  // cap: rows per expert
  TensorT<S> probs;      // (N, E) router softmax probabilities
  TensorT<S> input;      // (E·cap, C) the tokens each expert took (rows of ln_2's output)
  TensorT<S> hidden;     // (E·cap, F) fc output before GELU
  TensorT<S> act;        // (E·cap, F) after GELU
  TensorT<S> output;     // (E·cap, C) the experts' outputs, before the gate
  // Per assignment (token i, choice j) at i·k + j, k = topK:
  std::vector<int32_t> expert;  // the chosen expert
  std::vector<int64_t> row;     // its row in the packed tensors, −1: dropped
  std::vector<S> gate;          // its gate weight
  // Per expert (E):
  std::vector<int64_t> routed;       // assignments routed to it (kept + dropped)
  std::vector<int64_t> dropped;      // assignments over its capacity
  std::vector<int64_t> firstChoice;  // tokens whose first choice it is (f_e · N)
  double auxLoss = 0.0;              // E · Σ_e f_e · P_e of this forward
};

template <class S>
struct MoeGradKeepT {
  TensorT<S> dLogits;  // (N, E) gradient of the router logits
  TensorT<S> dOutput;  // (E·cap, C) gradient of the experts' outputs
  TensorT<S> dAct;     // (E·cap, F) gradient of the GELU output (B's scratch)
  TensorT<S> dHidden;  // (E·cap, F) gradient of the fc output
  TensorT<S> dInput;   // (E·cap, C) gradient of the experts' inputs (B's scratch)
};

}  // namespace bubblescope::engine
