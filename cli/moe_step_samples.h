// The "moe.*" trace samples of one rank's step (engine/layout/moe_samples.h):
// per MoE block of the rank's model chunks, every expert's routed and
// dropped assignments (this rank's tokens, all E experts: routing happens
// where the tokens are) and the block's aux loss (mean over the step's
// micro-batches). `train` and every rank of a layout run write them.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/gpt_model.h"  // MoeBlockStats
#include "trace_model/event.h"

namespace bubblescope::cli {

std::vector<trace_model::Sample> moeStepSamples(int32_t rank, int64_t timeNs,
                                                const std::vector<engine::MoeBlockStats>& blocks);

}  // namespace bubblescope::cli
