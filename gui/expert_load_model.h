// ExpertLoadModel: what the expert-load heat map shows of one run: per MoE
// block, a grid of experts × steps whose cells are the assignments routed to
// the expert in the step relative to the step's mean over the experts (1:
// its fair share; the step's largest cell is its load imbalance), with the
// assignments dropped over the expert's capacity.
//
// Contract: the numbers come from analysis::moeLoadFromSamples (the same
// definition `report` prints, summed over the ranks); this model only indexes
// them. Reads the run's `moe.*` samples through the reader it is given (GUI thread). Empty for a
// run without MoE blocks.
#pragma once

#include <QString>
#include <cstdint>
#include <optional>
#include <vector>

#include "common/status.h"
#include "storage/analysis/moe_load.h"
#include "storage/trace_reader.h"

namespace bubblescope::gui {

struct ExpertLoadCell {
  int64_t routed = 0;
  int64_t dropped = 0;
  double relativeLoad = 0;  // routed / the step's mean over the experts
};

class ExpertLoadModel {
 public:
  // Reads the run's MoE samples (replacing what the model held).
  Status load(storage::TraceReader& reader, int64_t runId);
  void setLoads(std::vector<analysis::MoeBlockLoad> loads);
  void clear() { setLoads({}); }

  bool empty() const { return blocks_.empty(); }
  const std::vector<analysis::MoeBlockLoad>& blocks() const { return blocks_; }
  int32_t experts(size_t block) const { return blocks_.at(block).experts; }
  int32_t steps(size_t block) const {
    return static_cast<int32_t>(blocks_.at(block).perStep.size());
  }
  // nullopt: out of range, or nothing routed in that step.
  std::optional<ExpertLoadCell> cell(size_t block, int32_t expert, int32_t step) const;
  // The colour scale's top: the largest relative load of any cell, at least 2.
  double scaleMax() const { return scaleMax_; }
  // "h.1 · expert 3 · step 2: 40 routed (1.60× the mean), 4 dropped".
  QString cellText(size_t block, int32_t expert, int32_t step) const;
  // The time of a step's samples (its end on the run's timeline).
  int64_t stepTimeNs(size_t block, int32_t step) const;

 private:
  std::vector<analysis::MoeBlockLoad> blocks_;
  double scaleMax_ = 2.0;
};

}  // namespace bubblescope::gui
