// compareRuns: two runs' layouts and headline metrics side by side, with the
// change of each (`bubblescope-cli compare`).
//
// Changes: relative ("+12.5%") for times, sizes and rates; percentage points
// ("+3.1 pp") for ratios; "same" / "changed" for layout keys; "-" when either
// side is unknown.
#pragma once

#include <string>
#include <vector>

#include "storage/analysis/run_report.h"

namespace bubblescope::analysis {

struct ComparisonRow {
  std::string metric;
  std::string a, b;
  std::string change;
};

std::vector<ComparisonRow> compareRuns(const RunReport& a, const RunReport& b);

// Means over the ranks with steps; unknown when no rank has any.
std::optional<double> meanOverRanks(const RunReport& r,
                                    std::optional<double> (RankReport::*metric)() const);

}  // namespace bubblescope::analysis
