// Advice on a mixture-of-experts run (docs/analysis.md, "Mixture of
// experts"): what to change when its experts' load is uneven, when it drops
// assignments, or when its ep all-to-alls take much of the step. Each line
// names the measurement, the change and what the change is expected to give.
//
// Rules (thresholds are constants here, documented in docs/analysis.md):
// - imbalance: a block's mean max/mean load >= kImbalanceAdvice → raise the
//   load-balancing loss coefficient; under ep the busiest expert's rank sets
//   the pace of the all-to-all and of the expert compute, so a balanced load
//   would cut that block's expert time by the factor 1/imbalance.
// - drops: a block's drop rate >= kDropRateAdvice → raise capacity_factor to
//   at least the worst step's max/mean (capacity = F·k·N/E must hold the
//   busiest expert, whose load is max/mean · k·N/E; a step sums its
//   micro-batches, so this is a lower bound); the dropped share then reaches
//   its expert again.
// - ep share: ep all-to-alls >= kEpShareAdvice of the step on some rank
//   (the ~20% rule, docs/formulas.md) → fewer ep ranks (experts per rank
//   rise) or more tokens per micro-batch to amortise the all-to-all latency.
#pragma once

#include <string>
#include <vector>

#include "storage/analysis/moe_comm.h"
#include "storage/analysis/moe_load.h"

namespace bubblescope::analysis {

inline constexpr double kImbalanceAdvice = 1.5;
inline constexpr double kDropRateAdvice = 0.05;
inline constexpr double kEpShareAdvice = 0.20;

// One line per rule that fires, in the order above (blocks in block order).
// `capacityFactor`: the run's (nullopt: unknown; the advice then gives the
// multiplier only).
std::vector<std::string> moeAdvice(const std::vector<MoeBlockLoad>& loads, const EpComm& comm,
                                   std::optional<double> capacityFactor);

// "Advice (mixture of experts)" and the lines; "" when there are none.
std::string moeAdviceText(const std::vector<std::string>& advice, bool markdown);

}  // namespace bubblescope::analysis
