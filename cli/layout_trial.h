// LayoutTrial: one layout predicted from a calibration, then really run and
// measured, so the prediction's error is a number (docs/prediction.md,
// "Accuracy"). `bench predict` and `plan --run` both go through here.
//
// Contract:
// - runLayoutTrial() starts `bubblescope-cli run --layout F --trace T` (this
//   executable, the same path a user's run takes, so an invalid layout gets
//   run's `invalid layout` message), hides its output unless `echo`, and
//   analyses the run it wrote (storage/analysis/run_analyzer.h). The layout
//   file is written next to the trace (T.layout.json).
// - Measured step time: the median over the run's steps after the first
//   (it warms up), of latest end - earliest start over the ranks. Measured
//   bubble per stage: the report's (wait + idle) / step of the stage's
//   ranks over the same steps less the hiccups (typical_steps.h): the steady
//   step a prediction describes.
// - Errors: the run failing (its last error line), a run without steps.
#pragma once

#include <optional>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "engine/layout/layout.h"
#include "planning/prediction.h"

namespace bubblescope::cli {

struct LayoutTrial {
  layout::Layout layout;
  layout::Prediction prediction;
  int64_t runId = -1;
  double measuredStepNs = 0;
  std::vector<double> measuredBubble;  // per stage, [0, 1]
  // The report's exposed communication, |comm \ compute| / step, of the
  // stage where it is largest (a stage's: its ranks' mean), over the same
  // steps as the bubbles; NaN when not measured.
  double measuredExposedComm = std::nan("");
  // Predicted for a measured background (bench predict,
  // planning/contention.h): the probe's B right before the run, and the
  // step the calibration's wall times as measured predict (no background):
  // the baseline the background model is judged against in the same run.
  std::optional<double> background;
  double wallCostsStepNs = 0;
  // The machine's speed when the layout ran (bench predict): the step of
  // the latest speed-reference run (the first calibration layout again)
  // over the step of that layout's calibration run; 1 as calibrated, 1.2 a
  // machine 20 % slower. A prediction times it takes out what the machine
  // itself drifted since the calibration.
  std::optional<double> speed;

  // |predicted - measured| / measured step time.
  double stepRelError() const;
  // The same with the prediction times `speed` (NaN without a speed).
  double speedReferencedRelError() const;
  // Mean over the stages of |predicted - measured bubble|, in percentage points.
  double bubbleErrorPoints() const;
  // The prediction's exposed communication over its step: the sum over the
  // dimensions of Prediction::exposedCommNs (each the slowest stage's).
  double predictedExposedComm() const;
  // |predicted - measured exposed communication|, in percentage points (NaN
  // when not measured).
  double exposedCommErrorPoints() const;
};

// Runs `layout` into `trace` with `bubblescope-cli run`; the run's id.
// `name` "": run's default name. `runFlags`: more flags for run (--net-if).
Result<int64_t> runLayout(const layout::Layout& layout, const std::string& trace, bool echo,
                          const std::string& name = "",
                          const std::vector<std::string>& runFlags = {});

Result<LayoutTrial> runLayoutTrial(const layout::Layout& layout,
                                   const layout::Prediction& prediction, const std::string& trace,
                                   bool echo = false);

// The same for run `runId` of `trace`, already measured (runLayoutTrial's
// analysis without the run): `bench predict --replay`.
Result<LayoutTrial> measuredTrial(const layout::Layout& layout,
                                  const layout::Prediction& prediction, const std::string& trace,
                                  int64_t runId);

struct TrialSummary {
  double medianRelError = 0;
  double maxRelError = 0;
  double medianBubbleErrorPoints = 0;
  double medianExposedCommErrorPoints = 0;
  // Spearman's rho of predicted against measured tokens/s over the trials
  // (common/rank_correlation.h): does the prediction order them as they
  // ran? NaN with fewer than 2 trials or no order among them.
  double rankCorrelation = 0;
};
TrialSummary summarizeTrials(const std::vector<LayoutTrial>& trials);

// One row per trial: layout, m, b, recompute, predicted and measured step
// (ms) and error, predicted and measured bubble (mean over stages) and the
// error in points, the same for exposed communication; when some trial has
// a background, also its background and the wall-cost prediction with its
// error. Then the summary keys as
// `key: value` lines (rank_correlation: TrialSummary::rankCorrelation;
// with backgrounds also median_rel_error_wall_costs; with speeds a speed
// and a speed-referenced error column and median_rel_error_speed_referenced).
std::string trialsToText(const std::vector<LayoutTrial>& trials);

}  // namespace bubblescope::cli
