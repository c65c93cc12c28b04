// Expert-parallel communication volume: the all-to-alls of a mixture-of-
// experts block whose E experts are split over an ep group of n ranks
// (docs/parallel.md, "Expert parallelism"; REFERENCE.md, "Mixture of
// experts"; GShard arXiv 2006.16668, DeepSpeed-MoE arXiv 2201.05596).
//
// Per MoE block and micro-batch a rank runs four all-to-alls on its ep group:
// dispatch and combine in the forward, the gradient of the combine and of the
// dispatch in the backward. Each carries the rank's assignments (k per token,
// T = b·s tokens of its micro-batch) of C fp32 elements each; with routing
// spread evenly over the experts and nothing dropped, (n−1)/n of them go to
// (or come from) another rank:
//   per all-to-all      k·T·C·(n−1)/n elements
//   per block and m.-b. 4·k·T·C·(n−1)/n elements (× 4 bytes)
//   per step            × m micro-batches × the rank's MoE blocks
// Dropped assignments (over an expert's capacity) are not sent: a run that
// drops a share d of its assignments moves (1 − d) of it.
// Pure arithmetic; units are in the names.
#pragma once

#include <cstdint>

#include "engine/layout/layout.h"

namespace bubblescope::layout {

inline constexpr int32_t kEpAllToAllsPerBlock = 4;  // dispatch, combine; both backward

struct EpVolumeInput {
  int64_t tokensPerMicroBatch = 0;  // T = micro-batch size × sequence length, on one rank
  int32_t topK = 1;                 // k
  int32_t hidden = 0;               // C
  int32_t ep = 1;                   // n, ranks of the ep group
  int32_t moeBlocks = 0;            // MoE blocks on the rank (its pipeline stage's)
  int32_t microBatches = 1;         // m
  int64_t elementBytes = 4;         // fp32
};

// Bytes one all-to-all sends off the rank: k·T·C·(n−1)/n elements; 0 for n = 1.
double epAllToAllBytes(const EpVolumeInput& in);
// Bytes per MoE block per micro-batch: kEpAllToAllsPerBlock all-to-alls.
double epBlockMicroBatchBytes(const EpVolumeInput& in);
// Bytes per step: per block and micro-batch × m × the rank's MoE blocks.
double epVolumeBytesPerStep(const EpVolumeInput& in);

// MoE blocks among the layers of pipeline stage `stage` (all its model
// chunks, by the layout's stage split); the model's count for pp = 1, 0 when
// the split is invalid or the stage out of range.
int32_t moeBlocksOnStage(const Layout& layout, int32_t stage);
// The input for a rank of `stage` with an ep group of `ep` ranks.
EpVolumeInput epVolumeInput(const Layout& layout, int32_t ep, int32_t stage);

}  // namespace bubblescope::layout
