// Expert-parallel communication volume: the all-to-alls of a mixture-of-
// experts block whose E experts are split over an ep group of n ranks
// (docs/parallel.md, "Expert parallelism"; docs/formulas.md,
// "Communication volume per step"; GShard arXiv 2006.16668, DeepSpeed-MoE arXiv 2201.05596).
//
// Per MoE block and micro-batch a rank runs five all-to-alls on its ep group
// (engine/moe_layer.h): forward `moe_counts` (E floats: the kept rows per
// expert), `moe_dispatch` (its kept token rows to the experts' ranks) and
// `moe_combine` (the experts' outputs back); backward `moe_dispatch_grad` and
// `moe_combine_grad` (the same rows' gradients). Each data all-to-all carries
// the rank's k·T assignments (T = b·s tokens of its micro-batch) of C fp32
// elements when routing is even and nothing is dropped. Bytes as the trace
// counts them (the whole send buffer, the rank's own part included, as
// nccl-tests counts an all-to-all's size):
//   per block and micro-batch  (4·k·T·C + E) · 4 B
//   per step                   × m micro-batches × the rank's MoE blocks,
//                              + 8 B: the experts' squared gradient norm, one
//                              double all-reduced over ep (clipping)
// Of these, (n−1)/n cross a link (k·T·C·(n−1)/n per all-to-all,
// docs/formulas.md); the rest stays on the rank. Dropped assignments are not sent.
// Pure arithmetic; units are in the names.
#pragma once

#include <cstdint>

#include "engine/layout/layout.h"

namespace bubblescope::layout {

inline constexpr int32_t kEpDataAllToAllsPerBlock = 4;  // dispatch, combine; both backward
inline constexpr int64_t kEpGradNormBytesPerStep = 8;   // "expert_grad_norm": one double

struct EpVolumeInput {
  int64_t tokensPerMicroBatch = 0;  // T = micro-batch size × sequence length, on one rank
  int32_t topK = 1;                 // k
  int32_t hidden = 0;               // C
  int32_t experts = 0;              // E
  int32_t ep = 1;                   // n, ranks of the ep group
  int32_t moeBlocks = 0;            // MoE blocks on the rank (its pipeline stage's)
  int32_t microBatches = 1;         // m
  int64_t elementBytes = 4;         // fp32
};

// Traced bytes per MoE block per micro-batch: (4·k·T·C + E) elements; 0 for n = 1.
double epBlockMicroBatchBytes(const EpVolumeInput& in);
// Traced bytes per step: per block and micro-batch × m × the rank's MoE
// blocks, + kEpGradNormBytesPerStep (0 for n = 1).
double epVolumeBytesPerStep(const EpVolumeInput& in);
// The share of them that crosses a link with even routing: (n−1)/n.
double epOffRankShare(int32_t ep);

// MoE blocks among the layers of pipeline stage `stage` (all its model
// chunks, by the layout's stage split); the model's count for pp = 1, 0 when
// the split is invalid or the stage out of range.
int32_t moeBlocksOnStage(const Layout& layout, int32_t stage);
// The input for a rank of `stage` with an ep group of `ep` ranks.
EpVolumeInput epVolumeInput(const Layout& layout, int32_t ep, int32_t stage);

}  // namespace bubblescope::layout
