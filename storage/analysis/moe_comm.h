// Expert-parallel communication of a run: the time and bytes of its ep
// all-to-alls (spans of dimension ep: counts, dispatch and combine forward,
// their gradients backward) per rank and step, against two formulas
// (docs/analysis.md, "Mixture of experts"):
// - even routing, nothing dropped: planning/expert_parallel_volume.h,
//   (4·k·T·C + E)·4 B per MoE block and micro-batch, what a plan expects;
// - the run's own routing, exact: from every rank's moe.* samples, rank r
//   sends its kept rows in the dispatch and their gradients back in the
//   backward (2·C·4 B per kept row of its tokens), its experts' outputs in
//   the combine and their input gradients (2·C·4 B per row its experts got
//   from the ranks of its ep group), and E floats of counts per block and
//   micro-batch, and 8 B per step (the experts' gradient norm over ep).
//   traced / routing is 1 when every byte is accounted for.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "storage/analysis/moe_load.h"
#include "storage/analysis/run_report.h"
#include "trace_model/event.h"

namespace bubblescope::analysis {

// One rank's ep communication, per step (sums over its steps / steps).
struct EpRankComm {
  int32_t rank = 0;
  int32_t stage = 0;
  double timeNsPerStep = 0;                   // |∪ ep spans|
  double bytesPerStep = 0;                    // Σ traced bytes of the ep spans
  std::optional<double> shareOfStep;          // time / step time
  std::optional<double> formulaBytesPerStep;  // even routing, nothing dropped
  std::optional<double> routingBytesPerStep;  // the run's routing (its moe.* samples)

  // traced / routing; unknown without the routing formula.
  std::optional<double> measuredToRouting() const {
    if (!routingBytesPerStep || *routingBytesPerStep <= 0) return std::nullopt;
    return bytesPerStep / *routingBytesPerStep;
  }
};

struct EpComm {
  int32_t ep = 1;                  // the ep group's size (1: no expert parallelism)
  std::vector<EpRankComm> ranks;   // ranks with ep spans, rank order
  std::optional<double> dropRate;  // Σ dropped / Σ routed over the MoE blocks and steps
  // Of the traced bytes, the share that crosses a link under even routing.
  double offRankShare = 0;

  bool empty() const { return ranks.empty(); }
};

// From a run's report (its ranks' ep time and bytes, coordinates, layout),
// its samples (every rank's; the routing formula), its MoE load (the drop
// rate) and its ep degree. Without report.layout both formulas are unknown.
// Ranks without ep spans are left out.
EpComm epCommOf(const RunReport& report, const std::vector<trace_model::Sample>& samples,
                const std::vector<MoeBlockLoad>& loads, int32_t ep);
// The ep degree of a run: its layout JSON's "ep" key (docs/layout-format.md),
// 1 when absent or not a positive integer.
int32_t epDegreeOf(const RunReport& report);
// Σ dropped / Σ routed over every block; unknown when nothing was routed.
std::optional<double> moeDropRate(const std::vector<MoeBlockLoad>& loads);

// The table `report` prints ("" when empty) and the JSON object of
// docs/report-format.md ("ep_comm").
std::string epCommText(const EpComm& comm, bool markdown);
nlohmann::ordered_json epCommJson(const EpComm& comm);

}  // namespace bubblescope::analysis
