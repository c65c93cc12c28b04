// AdviceTrial: one deliberately poor layout really run, the advice `report`
// gives on that run (storage/analysis/advice.h), and the first suggested
// layout really run too, so each suggestion's predicted gain meets a
// measured one (issue 35 point 5, `bench advice`).
//
// Contract:
// - Measured steps are LayoutTrial's (layout_trial.h): the median over the
//   steps after the first of latest end - earliest start.
// - Gains are in tokens per second, each layout's tokens per step being its
//   global batch (dp x m x b sequences) x T: a suggestion that changes the
//   global batch is compared on throughput, as the advice predicts it.
// - The advice taken is the first of the run's with a suggested layout and
//   a predicted gain from the rule the poor layout was made for, else the
//   first such of any rule (report order); none: the trial has no
//   after-run and its errors are NaN.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/layout/layout.h"
#include "storage/analysis/advice.h"

namespace bubblescope::cli {

struct AdviceTrial {
  std::string name;  // what makes the layout poor, e.g. "dp2 with 1000-element buckets"
  layout::Layout before;
  int64_t beforeRun = -1;
  double beforeStepNs = 0;
  // The advice taken (rule "" when none named a change).
  std::string rule;
  std::string dimension;
  std::string change;
  std::optional<layout::Layout> after;
  int64_t afterRun = -1;
  double afterStepNs = 0;
  // Runs of each layout: with more than one, before and after ran by turns
  // and the two steps are the medians over their runs (beforeRun and
  // afterRun the first of each).
  int32_t runs = 1;
  // Each run's step in the order they ran (before, after, before, ...),
  // when recorded: the measured gain is then the median over every after
  // run against the before runs beside it, so a machine whose speed moves
  // between runs moves both sides of each ratio alike.
  std::vector<double> beforeStepsNs;
  std::vector<double> afterStepsNs;
  double predictedGain = 0;  // tokens/s after / before - 1, as the advice predicted it

  bool suggested() const { return after.has_value(); }
  // tokens/s after / before - 1, measured: the median over neighbouring
  // runs when each run's step was recorded (as many before as after runs),
  // else from the two steps; NaN without a suggestion or a step.
  double measuredGain() const;
  // |predicted - measured gain| in percentage points; NaN without both.
  double errorPoints() const;
};

// Tokens per second of `l` at a step of `stepNs`; 0 when the step is not > 0.
double tokensPerSecond(const layout::Layout& l, double stepNs);

// The advice a trial takes: the first with a layout and a prediction from
// rule `preferred` (a run under load can also trip another rule first),
// else the first with a layout and a prediction; null when none.
const analysis::Advice* actionableAdvice(const std::vector<analysis::Advice>& advice,
                                         const std::string& preferred = "");

struct AdviceSummary {
  int32_t trials = 0;
  int32_t suggestions = 0;       // trials whose run got a suggested layout
  int32_t withinTenPoints = 0;   // ... whose measured gain is within 10 points of predicted
  double medianErrorPoints = 0;  // over the suggestions (0 when none)
  double maxErrorPoints = 0;
};
AdviceSummary summarizeAdviceTrials(const std::vector<AdviceTrial>& trials);

// One row per trial (poor layout, rule, change, predicted and measured gain,
// error in points), then the summary as `key: value` lines.
std::string adviceTrialsToText(const std::vector<AdviceTrial>& trials);

}  // namespace bubblescope::cli
