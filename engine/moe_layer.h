// MoeFeedForwardT<S>: the mixture-of-experts feed-forward of an MoE block
// (ModelConfig::isMoeBlock): a softmax router and E expert MLPs
// (fc (F, C) + bias, GELU, proj (C, F) + bias), each token sent to its topK
// best experts, at most cap = ceil(capacityFactor · N · topK / E) tokens per
// expert, the rest dropped (their MoE output is 0: the residual passes
// through). Switch Transformer (Fedus et al., arXiv 2101.03961) for top-1,
// GShard (Lepikhin et al., arXiv 2006.16668) for top-2; the exact maths are
// in docs/engine.md, "Mixture of experts".
//
// Expert parallelism (an ExpertParallelGroup of size ep > 1,
// expert_parallel.h): this rank holds only its E / ep experts (parameters
// named by their global index, so every layout initialises them alike).
// Each rank routes its own tokens exactly as one rank would (router,
// capacity of its N tokens, drops), then per forward: a count exchange
// ("moe_counts"), the dispatch of the kept token rows to the experts' ranks
// ("moe_dispatch") and the combine of their outputs back ("moe_combine");
// per backward input pass the same two for the gradients
// ("moe_dispatch_grad", "moe_combine_grad"): all-to-alls of dimension ep.
// Row results do not depend on which rows share a matrix product, so the
// outputs equal the single-rank layer's (docs/parallel.md).
//
// Contract: like the other layers (gpt_layers.h): owns its parameters,
// computes through LayerOpsT, forward overwrites, backward adds into
// parameter gradients and into the input gradient. The matrix products, the
// GELU and the row copies and sums of the dispatch and combine are ops of
// the backend; the router's softmax, the routing, the gate and router
// gradients and the all-to-alls' packing are loops of the CPU on host views
// of the tensors: the tensors themselves on the host (bit for bit), host
// copies staged through the backend on a device (downloads are
// synchronisation points). No tensor parallelism. With ep > 1, float only,
// the ExpertParallelGroup exchanging host buffers, and every rank of the
// group runs the same passes in the same order.
#pragma once

#include <string>
#include <vector>

#include "engine/compute_segments.h"
#include "engine/expert_parallel.h"
#include "engine/layer_ops.h"
#include "engine/layout/model_config.h"
#include "engine/moe_activations.h"
#include "engine/parameter.h"

namespace bubblescope::engine {

// Routing counts of one MoE block, summed over the forwards since they were
// last taken (GptModelT::takeMoeStats).
struct MoeBlockStats {
  int32_t block = 0;             // block index (h.<block>)
  int64_t tokens = 0;            // tokens routed, Σ N
  int32_t forwards = 0;          // forward passes (micro-batches)
  std::vector<int64_t> routed;   // per expert: assignments (kept + dropped)
  std::vector<int64_t> dropped;  // per expert: assignments over capacity
  double auxLossSum = 0.0;       // Σ aux over the forwards
  // Adds one forward's counts.
  template <class S>
  void add(const MoeActivationsT<S>& a) {
    if (routed.empty()) {
      routed.assign(a.routed.size(), 0);
      dropped.assign(a.dropped.size(), 0);
    }
    for (size_t e = 0; e < routed.size(); ++e) {
      routed[e] += a.routed[e];
      dropped[e] += a.dropped[e];
    }
    tokens += a.tokens;
    ++forwards;
    auxLossSum += a.auxLoss;
  }
};

template <class S>
class MoeFeedForwardT {
 public:
  // `prefix`: the block's name ("h.3"); parameters are "<prefix>.moe.router.weight"
  // (E, C) and "<prefix>.moe.experts.<e>.{fc,proj}.{weight,bias}".
  // `projStd`: the init std of the projections into the residual stream.
  // `ep`: the expert-parallel group (null: every expert here); its size
  // must divide E (the model checks). Not owned; outlives the layer.
  MoeFeedForwardT(const layout::ModelConfig& config, const std::string& prefix, double projStd,
                  Allocator* allocator, LayerOpsT<S> ops, ExpertParallelGroup* ep = nullptr);
  // The router, then this rank's experts (each marked `expert`).
  std::vector<ParameterT<S>*> parameters();
  int32_t epSize() const { return ep_ ? ep_->size() : 1; }
  // Whether the passes block on all-to-alls (ep > 1): the caller then lets
  // `segment` record the compute between them.
  bool communicates() const { return epSize() > 1; }

  // Buffers for N tokens (activations and W's kept gradients).
  MoeActivationsT<S> newActivations(int64_t n, Allocator* allocator) const;
  MoeGradKeepT<S> newGradKeep(int64_t n, Allocator* allocator) const;

  // y (N, C) = Σ_j gate_ij · expert_{e_ij}(x_i) over the kept assignments;
  // x (N, C). Fills acts (routing, counts, aux loss). `segment` (ep > 1:
  // required, it carries the trace context of the all-to-alls): ended
  // before each all-to-all and begun after it.
  Status forward(S* y, const S* x, MoeActivationsT<S>& acts,
                 ComputeSegments* segment = nullptr) const;
  // B: dx (N, C) += gradient of x given dy (N, C), including the gradient of
  // lossScale · auxLossCoef · aux; overwrites `keep`.
  Status backwardInput(S* dx, const S* dy, const MoeActivationsT<S>& acts, MoeGradKeepT<S>& keep,
                       double lossScale, ComputeSegments* segment = nullptr) const;
  // W: parameter gradients += theirs from x, the activations and `keep`.
  void backwardWeight(const S* x, const MoeActivationsT<S>& acts, const MoeGradKeepT<S>& keep);

  // FLOPs: router 2·N·C·E + the kept tokens' expert MLPs 4·C·F each, for
  // `rows` kept assignments (forward; weight gradients the same).
  int64_t forwardFlops(int64_t n, int64_t rows) const;

 private:
  struct Expert {
    ParameterT<S> fcWeight, fcBias;      // (F, C), (F)
    ParameterT<S> projWeight, projBias;  // (C, F), (C)
  };
  // Top-k choices, gates and rows (capacity, token order) from the router's
  // probabilities (N, E) on the host.
  void route(MoeActivationsT<S>& acts, const S* probs) const;
  // acts.fromRank: what each ep rank sends this rank's experts (an
  // all-to-all of the kept counts at ep > 1).
  Status exchangeCounts(MoeActivationsT<S>& acts, const TraceContext& where) const;
  // Rows of `width` values from the local layout to the expert layout
  // (`toExperts`, the dispatch) or back (the combine): an all-to-all.
  Status exchange(const S* from, S* to, int64_t width, bool toExperts,
                  const MoeActivationsT<S>& acts, const char* name,
                  const TraceContext& where) const;
  // Local expert l's rows in the expert layout: from `offset`, `rows` of them.
  int64_t expertOffset(const MoeActivationsT<S>& acts, int64_t l) const;
  int64_t expertRows(const MoeActivationsT<S>& acts, int64_t l) const;
  int64_t expertRowsTotal(const MoeActivationsT<S>& acts) const;

  layout::ModelConfig config_;
  LayerOpsT<S> ops_;
  ExpertParallelGroup* ep_;      // null: every expert on this rank
  int32_t localExperts_;         // El = E / ep
  int32_t firstExpert_;          // global index of local expert 0
  ParameterT<S> router_;         // (E, C), fp32 (no bias)
  std::vector<Expert> experts_;  // this rank's El experts
};

}  // namespace bubblescope::engine
