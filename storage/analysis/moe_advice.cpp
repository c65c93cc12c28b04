#include "storage/analysis/moe_advice.h"

#include <cmath>

#include "planning/expert_parallel_volume.h"
#include "storage/analysis/text_table.h"

namespace bubblescope::analysis {
namespace {

std::string blockName(const MoeBlockLoad& l) {
  return "MoE block h." + std::to_string(l.block);
}

// Rounded up to a quarter: capacity factors are written as 1.25, 1.5, ...
double upToQuarter(double v) {
  return std::ceil(v * 4.0 - 1e-9) / 4.0;
}

}  // namespace

std::vector<std::string> moeAdvice(const std::vector<MoeBlockLoad>& loads, const EpComm& comm,
                                   std::optional<double> capacityFactor) {
  std::vector<std::string> out;
  for (const auto& l : loads) {
    if (l.steps == 0 || l.imbalanceMean < kImbalanceAdvice) continue;
    out.push_back(blockName(l) + ": the busiest expert gets " + formatNumber(l.imbalanceMean, 2) +
                  "x the mean load (mean over " + std::to_string(l.steps) +
                  " steps). Raise aux_loss_coef (the load-balancing loss) so the router spreads "
                  "tokens; balanced, the block's expert time (set by its busiest expert) would "
                  "shrink by up to " +
                  formatPercent(1.0 - 1.0 / l.imbalanceMean) + ".");
  }
  for (const auto& l : loads) {
    const auto rate = l.dropRate();
    if (!rate || *rate < kDropRateAdvice) continue;
    // capacity = F·k·N/E must hold the busiest expert's imbalance·k·N/E.
    const double factor = upToQuarter(l.imbalanceMax);
    const std::string change =
        (capacityFactor ? "Raise capacity_factor from " + formatNumber(*capacityFactor, 2) + " to"
                        : std::string("Raise capacity_factor to")) +
        " at least " + formatNumber(factor, 2) + " (the worst step's max/mean load " +
        formatNumber(l.imbalanceMax, 2) + ", rounded up to a quarter)";
    out.push_back(blockName(l) + ": " + formatPercent(rate) + " of its assignments were dropped (" +
                  std::to_string(l.dropped) + " of " + std::to_string(l.routed) +
                  "; their tokens skip the expert). " + change +
                  ", or balance the load: the dropped " + formatPercent(rate) +
                  " would reach their experts again.");
  }
  const EpRankComm* worst = nullptr;
  for (const auto& c : comm.ranks) {
    if (c.shareOfStep && (!worst || *c.shareOfStep > *worst->shareOfStep)) worst = &c;
  }
  if (worst && *worst->shareOfStep >= kEpShareAdvice && comm.ep >= 2) {
    // The off-rank share (n−1)/n at half the ep degree.
    const int32_t half = comm.ep / 2;
    const double kept = layout::epOffRankShare(half) / layout::epOffRankShare(comm.ep);
    out.push_back(
        "Expert-parallel all-to-alls take " + formatPercent(worst->shareOfStep) +
        " of the step on rank " + std::to_string(worst->rank) + " (ep " + std::to_string(comm.ep) +
        "): use fewer ep ranks (more experts per rank: (ep-1)/ep of the assignments leave "
        "the rank; at ep " +
        std::to_string(half) + " the bytes crossing links fall to " + formatPercent(kept) +
        " of today's) or larger micro-batches (fewer, larger "
        "all-to-alls).");
  }
  return out;
}

std::string moeAdviceText(const std::vector<std::string>& advice, bool markdown) {
  if (advice.empty()) return "";
  std::string out =
      markdown ? "\n### Advice (mixture of experts)\n\n" : "\nAdvice (mixture of experts)\n";
  for (const auto& line : advice) out += (markdown ? "- " : "  - ") + line + "\n";
  return out;
}

}  // namespace bubblescope::analysis
