// A run's description in the trace file, built once from its layout: by the
// launcher (`run` begins the run) and by rank 0 of a job started by hand.
#pragma once

#include <cstdint>
#include <string>

#include "engine/layout/layout.h"
#include "storage/run_info.h"

namespace bubblescope::cli {

// "dp2-zero1 tiny", "dp1-pp4 1f1b small", "dp1-pp4 interleaved v2 small": the
// default name of a run in the trace file (the schedule only when pp > 1).
std::string runName(const layout::Layout& layout);

// name "" = runName(layout).
storage::RunInfo describeRun(const layout::Layout& layout, int32_t worldSize,
                             const std::string& name = "");

}  // namespace bubblescope::cli
