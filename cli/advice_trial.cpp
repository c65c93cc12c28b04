#include "cli/advice_trial.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/median.h"
#include "engine/layout/global_batch.h"
#include "storage/analysis/text_table.h"

namespace bubblescope::cli {

double tokensPerSecond(const layout::Layout& l, double stepNs) {
  if (!(stepNs > 0)) return 0.0;
  const double tokens = static_cast<double>(layout::globalBatchSequences(l)) * l.model.seqLen;
  return tokens / (stepNs * 1e-9);
}

namespace {

// tokens/s after / before - 1; NaN unless both steps are > 0.
double gainOf(const AdviceTrial& t, double beforeNs, double afterNs) {
  const double b = tokensPerSecond(t.before, beforeNs);
  const double a = tokensPerSecond(*t.after, afterNs);
  if (!(b > 0) || !(a > 0)) return std::nan("");
  return a / b - 1.0;
}

}  // namespace

double AdviceTrial::measuredGain() const {
  if (!after) return std::nan("");
  const size_t n = afterStepsNs.size();
  if (n == 0 || beforeStepsNs.size() != n) return gainOf(*this, beforeStepNs, afterStepNs);
  // Run order b0 a0 b1 a1 ...: a_i against b_i (before it) and b_{i+1}.
  std::vector<double> gains;
  for (size_t i = 0; i < n; ++i) {
    gains.push_back(gainOf(*this, beforeStepsNs[i], afterStepsNs[i]));
    if (i + 1 < n) gains.push_back(gainOf(*this, beforeStepsNs[i + 1], afterStepsNs[i]));
  }
  if (std::any_of(gains.begin(), gains.end(), [](double g) { return !std::isfinite(g); })) {
    return std::nan("");
  }
  return median(gains);
}

double AdviceTrial::errorPoints() const {
  const double measured = measuredGain();
  if (!std::isfinite(measured) || !std::isfinite(predictedGain)) return std::nan("");
  return 100.0 * std::abs(predictedGain - measured);
}

const analysis::Advice* actionableAdvice(const std::vector<analysis::Advice>& advice,
                                         const std::string& preferred) {
  const analysis::Advice* first = nullptr;
  for (const analysis::Advice& a : advice) {
    if (!a.layout || !a.predicted) continue;
    if (a.rule == preferred) return &a;
    if (first == nullptr) first = &a;
  }
  return first;
}

AdviceSummary summarizeAdviceTrials(const std::vector<AdviceTrial>& trials) {
  AdviceSummary s;
  s.trials = static_cast<int32_t>(trials.size());
  std::vector<double> errors;
  for (const AdviceTrial& t : trials) {
    if (!t.suggested()) continue;
    ++s.suggestions;
    const double e = t.errorPoints();
    if (!std::isfinite(e)) continue;
    errors.push_back(e);
    if (e <= 10.0) ++s.withinTenPoints;
  }
  s.medianErrorPoints = median(errors);
  s.maxErrorPoints = errors.empty() ? 0.0 : *std::max_element(errors.begin(), errors.end());
  return s;
}

namespace {

std::string signedPercent(double v) {
  if (!std::isfinite(v)) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%+.1f%%", 100.0 * v);
  return text;
}

}  // namespace

std::string adviceTrialsToText(const std::vector<AdviceTrial>& trials) {
  analysis::TextTable t{{"poor layout", "measured ms", "advice", "change", "after ms",
                         "gain predicted", "gain measured", "error pp"},
                        {},
                        false};
  for (const AdviceTrial& trial : trials) {
    const double e = trial.errorPoints();
    t.rows.push_back({trial.name, analysis::formatMs(trial.beforeStepNs),
                      trial.rule.empty()
                          ? "(none with a change)"
                          : trial.rule + (trial.dimension.empty() ? "" : " " + trial.dimension),
                      trial.change.empty() ? "-" : trial.change,
                      trial.suggested() ? analysis::formatMs(trial.afterStepNs) : "-",
                      trial.suggested() ? signedPercent(trial.predictedGain) : "-",
                      signedPercent(trial.measuredGain()),
                      std::isfinite(e) ? analysis::formatNumber(e, 1) : "-"});
  }
  const AdviceSummary s = summarizeAdviceTrials(trials);
  char summary[256];
  std::snprintf(summary, sizeof summary,
                "trials: %d\nsuggestions: %d\nwithin_10_points: %d\nmedian_gain_error_points: "
                "%.1f\nmax_gain_error_points: %.1f\n",
                s.trials, s.suggestions, s.withinTenPoints, s.medianErrorPoints, s.maxErrorPoints);
  return t.render(false) + summary;
}

}  // namespace bubblescope::cli
