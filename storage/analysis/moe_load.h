// Load balance of a run's mixture-of-experts blocks, from its "moe.*"
// samples (engine/layout/moe_samples.h; docs/analysis.md, "Mixture of
// experts"): per MoE block over the steps, the load imbalance
// max_e routed_e / mean_e routed_e of each step (1: perfectly balanced; E:
// every assignment on one expert) and the drop rate Σ dropped / Σ routed.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "trace_model/event.h"

namespace bubblescope::analysis {

struct MoeBlockLoad {
  int32_t block = 0;             // h.<block>
  int32_t experts = 0;           // E (experts with a routed series)
  int32_t steps = 0;             // steps with samples
  double imbalanceMean = 0.0;    // mean over the steps of max / mean
  double imbalanceMax = 0.0;     // the worst step's
  int32_t imbalanceMaxStep = 0;  // that step, 0-based in time order
  int64_t routed = 0;            // Σ over steps and experts
  int64_t dropped = 0;
  std::optional<double> auxLossMean;  // mean over the steps; unknown without samples

  std::optional<double> dropRate() const {
    if (routed <= 0) return std::nullopt;
    return static_cast<double>(dropped) / static_cast<double>(routed);
  }
};

// One entry per MoE block with samples, in block order; the samples of one
// rank (a step is one sample time). Other samples are ignored.
std::vector<MoeBlockLoad> moeLoadFromSamples(const std::vector<trace_model::Sample>& samples);

// The table `report` prints (empty string: no MoE block), and the JSON
// array of docs/report-format.md ("moe").
std::string moeLoadText(const std::vector<MoeBlockLoad>& loads, bool markdown);
nlohmann::ordered_json moeLoadJson(const std::vector<MoeBlockLoad>& loads);

}  // namespace bubblescope::analysis
