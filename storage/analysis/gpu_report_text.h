// The GPU sections of `report`'s text and Markdown (gpu_time_analyzer.h,
// Holistic Trace Analysis's definitions): per rank the temporal breakdown
// and comm/compute overlap, the idle breakdown per stream, and the GPU work
// launched before the profile, on its own line. Without GPU records: empty,
// or for an imported run one line saying so.
#pragma once

#include <string>

#include "storage/analysis/run_report.h"

namespace bubblescope::analysis {

std::string gpuReportText(const RunReport& report, bool markdown);

}  // namespace bubblescope::analysis
