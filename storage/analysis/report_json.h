// The JSON form of run reports (`bubblescope-cli report --json`); the schema
// is documented in docs/report-format.md.
//
// Contract: every key of the schema is always present; an unknown value is
// null. Times in ms, sizes in bytes, ratios in [0, 1].
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <vector>

#include "storage/analysis/run_report.h"

namespace bubblescope::analysis {

// {"runs": [runToJson(r) ...]}; keys keep the documented order.
// `topKernels`: how many of each rank's kernels "gpu_kernels"."top" lists.
nlohmann::ordered_json reportToJson(const std::vector<RunReport>& reports,
                                    int32_t topKernels = kDefaultTopKernels);
nlohmann::ordered_json runToJson(const RunReport& report,
                                 int32_t topKernels = kDefaultTopKernels);

}  // namespace bubblescope::analysis
