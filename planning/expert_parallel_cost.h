// What expert parallelism adds to a predicted step (docs/prediction.md,
// "Expert parallelism"): the parameters a rank holds of a model chunk, split
// into the shared ones and its experts, and the all-to-alls of one pass of
// one MoE block, as the engine runs them (engine/moe_layer.h,
// engine/parallel/expert_data_parallel.h; docs/parallel.md).
//
// Per MoE block and micro-batch a rank of an ep group of n ranks runs
//  - forward (and its recompute): `moe_counts` (E fp32), `moe_dispatch` and
//    `moe_combine` (the kept rows of C fp32 each: k·b·T, or E · capacity
//    when that is fewer): 3 all-to-alls;
//  - backward input (B, or the fused backward): `moe_dispatch_grad` and
//    `moe_combine_grad`, the same rows each: 2 all-to-alls;
//  - backward weight (W): none.
// Bytes as the trace counts them (the whole send buffer: expert_parallel_
// volume.h), with even routing and nothing dropped: the most a pass sends.
// Expert compute per rank does not change with n under even routing: a rank
// runs E/n experts over the k·b·T·n/n = k·b·T rows its group sends them, the
// rows one rank runs over all E experts at ep 1; so a block's measured cost
// is used as it is.
// Gradients: the shared parameters are reduced over dp, a rank's experts
// over its expert-data-parallel group of dp / n ranks (none when dp = n);
// the experts' squared gradient norm is all-reduced over ep (8 bytes).
// Pure arithmetic; units are in the names.
#pragma once

#include <cstdint>

#include "engine/layout/layout.h"

namespace bubblescope::layout {

inline constexpr int32_t kEpForwardAllToAlls = 3;   // counts, dispatch, combine
inline constexpr int32_t kEpBackwardAllToAlls = 2;  // dispatch_grad, combine_grad

// The parameters one rank holds of a virtual stage: blocks firstLayer ..
// firstLayer + layers − 1, with the embedding and / or the head. `shared`
// is on every dp rank (divided over tp), `experts` is this rank's share of
// the MoE blocks' experts (all E experts' weights / ep).
struct ChunkParameters {
  double shared = 0;
  double experts = 0;
  int32_t moeBlocks = 0;
  double total() const { return shared + experts; }
};
ChunkParameters chunkParameters(const Layout& layout, int32_t firstLayer, int32_t layers,
                                bool embedding, bool head);

// The all-to-alls one MoE block runs in one pass of one micro-batch on one
// rank: how many, and the bytes of all of them together. Zero when ep = 1.
struct EpAllToAlls {
  double calls = 0;
  double bytes = 0;
};
EpAllToAlls epForwardAllToAlls(const Layout& layout);
EpAllToAlls epBackwardAllToAlls(const Layout& layout);

// dp / ep: the ranks holding the same experts, over which their gradients
// are reduced.
int32_t expertDataParallelSize(const Layout& layout);

}  // namespace bubblescope::layout
