// What one mixture-of-experts feed-forward (engine/moe_layer.h) keeps
// between its forward and backward passes, and the gradients its backward
// input half ("B") keeps for its weight half ("W").
//
// Contract: sized by MoeFeedForwardT::newActivations() for N tokens and the
// capacity of N (ModelConfig::expertCapacity). Two row layouts of (E·cap, ...)
// tensors (docs/engine.md, "Mixture of experts"):
// - local: this rank's tokens, expert e's rows e·cap .. e·cap + kept[e] − 1
//   in the order the tokens were placed (input, output; dCombined, dDispatched);
// - expert: what this rank's El = E / ep experts compute, local expert l's
//   rows from l·ep·cap on, those from ep rank s (fromRank[s·El + l] rows)
//   after those from ranks < s (hidden, act, expertInput, expertOutput;
//   dOutput, dAct, dHidden, dInput).
// Without expert parallelism (ep 1) the two layouts coincide and the
// expert-layout tensors of ep > 1 only (expertInput, expertOutput,
// dCombined, dDispatched) stay empty: the local ones serve both. The routing
// tables are host vectors; the tensors are in the backend's memory (a
// device's too: the layer stages what it computes on the host, moe_layer.h).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/tensor.h"

namespace bubblescope::engine {

template <class S>
struct MoeActivationsT {
  int64_t tokens = 0;      // N
  int64_t capacity = 0;    // cap: rows per expert
  TensorT<S> probs;        // (N, E) router softmax probabilities
  TensorT<S> input;        // (E·cap, C) local: the tokens each expert took (rows of ln_2's output)
  TensorT<S> hidden;       // (E·cap, F) expert layout: fc output before GELU
  TensorT<S> act;          // (E·cap, F) expert layout: after GELU
  TensorT<S> output;       // (E·cap, C) local: the experts' outputs, before the gate
  TensorT<S> expertInput;  // (E·cap, C) ep > 1, expert layout: the tokens this rank's experts took
  TensorT<S> expertOutput;  // (E·cap, C) ep > 1, expert layout: their outputs
  // Per assignment (token i, choice j) at i·k + j, k = topK:
  std::vector<int32_t> expert;  // the chosen expert
  std::vector<int64_t> row;     // its row in the packed tensors, −1: dropped
  std::vector<S> gate;          // its gate weight
  // Per expert (E):
  std::vector<int64_t> routed;       // assignments routed to it (kept + dropped)
  std::vector<int64_t> dropped;      // assignments over its capacity
  std::vector<int64_t> firstChoice;  // tokens whose first choice it is (f_e · N)
  // Per (ep rank s, local expert l) at s·El + l: the rows this rank's expert
  // l takes from rank s (ep 1: kept[l]).
  std::vector<int64_t> fromRank;
  double auxLoss = 0.0;  // E · Σ_e f_e · P_e of this forward
  // On a device backend: the host copy of probs the routing and the
  // backward read (empty on the host, where probs is read in place).
  std::vector<S> probsHost;
};

template <class S>
struct MoeGradKeepT {
  TensorT<S> dLogits;      // (N, E) gradient of the router logits
  TensorT<S> dOutput;      // (E·cap, C) expert layout: gradient of the experts' outputs
  TensorT<S> dAct;         // (E·cap, F) expert layout: gradient of the GELU output (B's scratch)
  TensorT<S> dHidden;      // (E·cap, F) expert layout: gradient of the fc output
  TensorT<S> dInput;       // (E·cap, C) expert layout: gradient of the experts' inputs (scratch)
  TensorT<S> dCombined;    // (E·cap, C) ep > 1, local: gradient of this rank's tokens' outputs
  TensorT<S> dDispatched;  // (E·cap, C) ep > 1, local: gradient of the tokens it dispatched
};

}  // namespace bubblescope::engine
