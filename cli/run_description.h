// A run's description in the trace file, built once from its layout: by the
// launcher (`run` begins the run), by rank 0 of a job started by hand, and by
// single-process `train`, whose layout is the 1x1x1 one (singleProcessLayout).
#pragma once

#include <cstdint>
#include <string>

#include "engine/layout/layout.h"
#include "engine/trainer_options.h"
#include "storage/run_info.h"

namespace bubblescope::cli {

// "dp2-zero1 tiny", "dp1-pp4 1f1b small", "dp1-pp4 interleaved v2 small",
// "dp2-int8 small", "dp4-hierarchical small": the default name of a run in
// the trace file (the schedule only when pp > 1, the gradients' compression
// and all-reduce only when not plain).
std::string runName(const layout::Layout& layout);

// The 1x1x1 layout a process alone trains as: dp = tp = pp = 1, ZeRO 0, a
// one-stage 1f1b schedule, and the options' model, micro-batches (m, B),
// steps, seed, learning rate and data file.
layout::Layout singleProcessLayout(const engine::TrainerOptions& options, int64_t steps,
                                   layout::Backend backend);

// name "" = runName(layout).
storage::RunInfo describeRun(const layout::Layout& layout, int32_t worldSize,
                             const std::string& name = "");

}  // namespace bubblescope::cli
