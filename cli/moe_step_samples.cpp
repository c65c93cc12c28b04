#include "cli/moe_step_samples.h"

#include "engine/layout/moe_samples.h"

namespace bubblescope::cli {

std::vector<trace_model::Sample> moeStepSamples(int32_t rank, int64_t timeNs,
                                                const std::vector<engine::MoeBlockStats>& blocks) {
  std::vector<trace_model::Sample> samples;
  for (const auto& b : blocks) {
    using layout::MoeSeries;
    auto add = [&](MoeSeries series, int32_t expert, double value) {
      samples.push_back({rank, layout::moeSampleName({b.block, series, expert}), timeNs, value});
    };
    for (size_t e = 0; e < b.routed.size(); ++e) {
      add(MoeSeries::kRouted, static_cast<int32_t>(e), static_cast<double>(b.routed[e]));
      add(MoeSeries::kDropped, static_cast<int32_t>(e), static_cast<double>(b.dropped[e]));
    }
    if (b.forwards > 0) add(MoeSeries::kAuxLoss, -1, b.auxLossSum / b.forwards);
  }
  return samples;
}

}  // namespace bubblescope::cli
