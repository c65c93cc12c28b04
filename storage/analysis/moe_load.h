// Load balance of a run's mixture-of-experts blocks, from its "moe.*"
// samples (engine/layout/moe_samples.h; docs/analysis.md, "Mixture of
// experts"): per MoE block over the steps, the load imbalance
// max_e routed_e / mean_e routed_e of each step (1: perfectly balanced; E:
// every assignment on one expert) and the drop rate Σ dropped / Σ routed.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "trace_model/event.h"

namespace bubblescope::analysis {

// One step of one MoE block (summed over the step's micro-batches).
struct MoeStepLoad {
  int32_t step = 0;                      // 0-based in time order
  int64_t timeNs = 0;                    // the samples' time (the step's end)
  std::vector<int64_t> routedByExpert;   // index = expert; routed = kept + dropped
  std::vector<int64_t> droppedByExpert;  // same size
  int64_t routed = 0, dropped = 0;       // Σ over the experts
  std::optional<double> imbalance;       // max / mean routed; unknown when nothing routed
  std::optional<double> auxLoss;

  std::optional<double> dropRate() const {
    if (routed <= 0) return std::nullopt;
    return static_cast<double>(dropped) / static_cast<double>(routed);
  }
};

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
  std::vector<MoeStepLoad> perStep;   // every step with samples, in time order

  std::optional<double> dropRate() const {
    if (routed <= 0) return std::nullopt;
    return static_cast<double>(dropped) / static_cast<double>(routed);
  }
};

// One entry per MoE block with samples, in block order. Samples of several
// ranks add up: each rank routes its own tokens (a layout run writes every
// rank's, `train` alone rank 0's), and a rank's n-th sample time of a block
// is the block's step n (its time: the latest rank's). Aux losses average
// over the ranks. Other samples are ignored.
std::vector<MoeBlockLoad> moeLoadFromSamples(const std::vector<trace_model::Sample>& samples);

// The tables `report` prints (empty string: no MoE block): per block, then
// per step and block the imbalance and drop rate; and the JSON array of
// docs/report-format.md ("moe", each block with its "steps").
std::string moeLoadText(const std::vector<MoeBlockLoad>& loads, bool markdown);
nlohmann::ordered_json moeLoadJson(const std::vector<MoeBlockLoad>& loads);

}  // namespace bubblescope::analysis
