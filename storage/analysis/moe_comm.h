// Expert-parallel communication of a run: the time and bytes of its ep
// all-to-alls (dispatch and combine, forward and backward; spans of
// dimension ep) per rank and step, against the formula of
// engine/layout/expert_parallel_volume.h (docs/analysis.md, "Mixture of
// experts").
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "storage/analysis/moe_load.h"
#include "storage/analysis/run_report.h"

namespace bubblescope::analysis {

// One rank's ep communication, per step (sums over its steps / steps).
struct EpRankComm {
  int32_t rank = 0;
  int32_t stage = 0;
  double timeNsPerStep = 0;                   // |∪ ep spans|
  double bytesPerStep = 0;                    // Σ traced bytes of the ep spans
  std::optional<double> shareOfStep;          // time / step time
  std::optional<double> formulaBytesPerStep;  // uniform routing, nothing dropped
  // The formula × (1 − the run's drop rate): dropped assignments are not sent.
  std::optional<double> formulaAfterDropsBytesPerStep;

  // traced / formula after drops; unknown without a formula.
  std::optional<double> measuredToFormula() const {
    if (!formulaAfterDropsBytesPerStep || *formulaAfterDropsBytesPerStep <= 0) return std::nullopt;
    return bytesPerStep / *formulaAfterDropsBytesPerStep;
  }
};

struct EpComm {
  int32_t ep = 1;                  // the ep group's size (1: no expert parallelism)
  std::vector<EpRankComm> ranks;   // ranks with ep spans or an ep formula, rank order
  std::optional<double> dropRate;  // Σ dropped / Σ routed over the MoE blocks and steps

  bool empty() const { return ranks.empty(); }
};

// From a run's report (its ranks' ep time and bytes) and its MoE load (the
// drop rate). `ep`: the run's ep degree (the formula needs the layout's model
// and micro-batches too; none without report.layout). Ranks with neither ep
// spans nor a nonzero formula are left out.
EpComm epCommOf(const RunReport& report, const std::vector<MoeBlockLoad>& loads, int32_t ep);
// Σ dropped / Σ routed over every block; unknown when nothing was routed.
std::optional<double> moeDropRate(const std::vector<MoeBlockLoad>& loads);

// The table `report` prints ("" when empty) and the JSON object of
// docs/report-format.md ("ep_comm").
std::string epCommText(const EpComm& comm, bool markdown);
nlohmann::ordered_json epCommJson(const EpComm& comm);

}  // namespace bubblescope::analysis
