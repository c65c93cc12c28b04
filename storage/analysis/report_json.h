// The JSON form of run reports (`bubblescope-cli report --json`); the schema
// is documented in docs/report-format.md.
//
// Contract: every key of the schema is always present; an unknown value is
// null. Times in ms, sizes in bytes, ratios in [0, 1].
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "storage/analysis/run_report.h"

namespace bubblescope::analysis {

// {"runs": [runToJson(r) ...]}; keys keep the documented order.
nlohmann::ordered_json reportToJson(const std::vector<RunReport>& reports);
nlohmann::ordered_json runToJson(const RunReport& report);

}  // namespace bubblescope::analysis
