// Nearby layouts of a run's layout, the candidates the advice rules search
// (advice.h). Every variant keeps the world size (dp × tp × pp), passes
// layout::validate as `run` would, differs from the input, and appears once.
//
// Degree changes keep the global batch (dp × m × b) when m divides evenly
// (m × dp / dp'), clear explicit stage_layers when pp changes, and fall back
// to 1F1B when pp becomes 1 under the interleaved schedule; a set
// global_batch follows the new dp × m × b.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/layout/layout.h"

namespace bubblescope::analysis {

// For communication of `dim` ("dp", "zero", "tp", "pp") above its share:
// dp/zero: overlap on, the default gradient bucket (25 MiB) when the layout
// sets another, a lower ZeRO stage than 2/3, each of plan's gradient
// compressions (fp16, bf16, int8, powersgd:4) when it sends fp32 (at ZeRO 0:
// validate drops the others), dp/2 with pp×2 or tp×2, m×2 (more tokens per
// gradient sync); tp: tp/2 with dp×2 or pp×2; pp: pp/2
// with dp×2 or tp×2, m/2 with b×2 (fewer, larger transfers).
std::vector<layout::Layout> commVariants(const layout::Layout& l, const std::string& dim);

// For a pipeline bubble: each other schedule (interleaved with v = 2), m×2
// (b/2 when b is even, so the global batch stays), pp/2 with dp×2.
std::vector<layout::Layout> bubbleVariants(const layout::Layout& l);

// For too few micro-batches: m doubled up to `perStage` × pp, each with b
// divided to keep the global batch when it divides, and with b kept.
std::vector<layout::Layout> microBatchVariants(const layout::Layout& l, int32_t perStage);

// For memory headroom: every lower ZeRO stage, recompute off, and both.
std::vector<layout::Layout> memoryVariants(const layout::Layout& l);

// l with degrees (dp, tp, pp), the global batch kept as said above.
layout::Layout withDegrees(const layout::Layout& l, int32_t dp, int32_t tp, int32_t pp);

}  // namespace bubblescope::analysis
