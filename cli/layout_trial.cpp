#include "cli/layout_trial.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/job_process.h"
#include "cli/mpirun.h"
#include "cli/run_description.h"
#include "common/median.h"
#include "common/rank_correlation.h"
#include "storage/analysis/run_analyzer.h"
#include "storage/analysis/text_table.h"
#include "storage/trace_reader.h"

namespace bubblescope::cli {
namespace {

double meanOf(const std::vector<double>& v) {
  if (v.empty()) return 0.0;
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

}  // namespace

Result<int64_t> runLayout(const layout::Layout& l, const std::string& trace, bool echo,
                          const std::string& name, const std::vector<std::string>& runFlags) {
  const std::string file = trace + ".layout.json";
  {
    std::ofstream out(file);
    out << layout::toJson(l).dump(2) << "\n";
    if (!out) return Status::invalidArgument("cannot write " + file);
  }
  int64_t runId = -1;
  std::string lastError;
  JobHooks hooks;
  hooks.onLine = [&](const std::string& line, bool) {
    if (line.rfind("run_id: ", 0) == 0) runId = std::strtoll(line.c_str() + 8, nullptr, 10);
    if (line.rfind("error: ", 0) == 0) lastError = line.substr(7);
    return echo;
  };
  std::vector<std::string> argv = {selfExecutable(), "run", "--layout", file, "--trace", trace};
  if (!name.empty()) argv.insert(argv.end(), {"--name", name});
  argv.insert(argv.end(), runFlags.begin(), runFlags.end());
  BS_ASSIGN_OR_RETURN(const JobExit exit, runJobProcess(argv, hooks));
  if (exit.exitCode != 0 || runId < 0) {
    return Status::invalidArgument(
        runName(l) + ": " +
        (lastError.empty() ? "run exited with " + std::to_string(exit.exitCode) : lastError));
  }
  return runId;
}

double LayoutTrial::stepRelError() const {
  if (!(measuredStepNs > 0)) return std::nan("");
  return std::abs(prediction.stepNs - measuredStepNs) / measuredStepNs;
}

double LayoutTrial::bubbleErrorPoints() const {
  const size_t n = std::min(measuredBubble.size(), prediction.bubble.size());
  if (n == 0) return std::nan("");
  double sum = 0;
  for (size_t k = 0; k < n; ++k) sum += std::abs(prediction.bubble[k] - measuredBubble[k]);
  return 100.0 * sum / static_cast<double>(n);
}

double LayoutTrial::predictedExposedComm() const {
  if (!(prediction.stepNs > 0)) return std::nan("");
  double ns = 0;
  for (const auto& [dim, exposed] : prediction.exposedCommNs) ns += exposed;
  return ns / prediction.stepNs;
}

double LayoutTrial::exposedCommErrorPoints() const {
  return 100.0 * std::abs(predictedExposedComm() - measuredExposedComm);
}

Result<LayoutTrial> runLayoutTrial(const layout::Layout& l, const layout::Prediction& prediction,
                                   const std::string& trace, bool echo) {
  BS_ASSIGN_OR_RETURN(const int64_t runId, runLayout(l, trace, echo));
  return measuredTrial(l, prediction, trace, runId);
}

Result<LayoutTrial> measuredTrial(const layout::Layout& l, const layout::Prediction& prediction,
                                  const std::string& trace, int64_t runId) {
  LayoutTrial t;
  t.layout = l;
  t.prediction = prediction;
  t.runId = runId;
  BS_ASSIGN_OR_RETURN(auto reader, storage::TraceReader::open(trace));
  // The bubbles over the steps the prediction describes.
  analysis::AnalysisOptions steady;
  steady.steadyStepsOnly = true;
  BS_ASSIGN_OR_RETURN(const analysis::RunReport report,
                      analysis::analyzeRun(*reader, t.runId, steady));
  std::vector<double> steps;
  for (size_t i = report.steps.size() > 1 ? 1 : 0; i < report.steps.size(); ++i) {
    steps.push_back(static_cast<double>(report.steps[i].timeNs));
  }
  if (steps.empty()) {
    return Status::failedPrecondition(runName(l) + ": run " + std::to_string(t.runId) +
                                      " recorded no steps");
  }
  t.measuredStepNs = median(steps);
  for (const analysis::StageReport& s : report.stages) {
    t.measuredBubble.push_back(s.bubbleFraction.value_or(std::nan("")));
  }
  std::map<int32_t, std::vector<double>> exposed;  // stage -> its ranks' shares
  for (const analysis::RankReport& r : report.ranks) {
    if (auto share = r.exposedCommRatio()) exposed[r.info.pp].push_back(*share);
  }
  for (const auto& [stage, shares] : exposed) {
    const double mean = meanOf(shares);
    if (!(t.measuredExposedComm >= mean)) t.measuredExposedComm = mean;  // NaN at first
  }
  return t;
}

double LayoutTrial::speedReferencedRelError() const {
  if (!speed || !(measuredStepNs > 0)) return std::nan("");
  return std::abs(prediction.stepNs * *speed - measuredStepNs) / measuredStepNs;
}

TrialSummary summarizeTrials(const std::vector<LayoutTrial>& trials) {
  std::vector<double> rel, points, exposedPoints;
  for (const LayoutTrial& t : trials) {
    if (std::isfinite(t.stepRelError())) rel.push_back(t.stepRelError());
    if (std::isfinite(t.bubbleErrorPoints())) points.push_back(t.bubbleErrorPoints());
    const double exposed = t.exposedCommErrorPoints();
    if (std::isfinite(exposed)) exposedPoints.push_back(exposed);
  }
  TrialSummary s;
  s.medianRelError = median(rel);
  s.maxRelError = rel.empty() ? 0.0 : *std::max_element(rel.begin(), rel.end());
  s.medianBubbleErrorPoints = median(points);
  s.medianExposedCommErrorPoints = median(exposedPoints);
  // tokens/s: the step's tokens (prediction: tokens/s x step) over each step.
  std::vector<double> predicted, measured;
  for (const LayoutTrial& t : trials) {
    const double tokensNs = t.prediction.tokensPerSecond * t.prediction.stepNs;
    if (t.measuredStepNs > 0 && t.prediction.stepNs > 0 && std::isfinite(tokensNs)) {
      predicted.push_back(tokensNs / t.prediction.stepNs);
      measured.push_back(tokensNs / t.measuredStepNs);
    }
  }
  s.rankCorrelation = spearmanRho(predicted, measured);
  return s;
}

std::string trialsToText(const std::vector<LayoutTrial>& trials) {
  using analysis::formatMs;
  using analysis::formatNumber;
  const bool loads = std::any_of(trials.begin(), trials.end(),
                                 [](const LayoutTrial& t) { return t.background.has_value(); });
  analysis::TextTable t{{"layout", "m", "b", "recompute", "predicted ms", "measured ms", "error",
                         "bubble predicted", "bubble measured", "bubble error pp",
                         "exposed predicted", "exposed measured", "exposed error pp"},
                        {},
                        false};
  if (loads) t.header.insert(t.header.end(), {"background", "wall-cost ms", "wall-cost error"});
  const bool speeds = std::any_of(trials.begin(), trials.end(),
                                  [](const LayoutTrial& t) { return t.speed.has_value(); });
  if (speeds) t.header.insert(t.header.end(), {"speed", "referenced error"});
  std::vector<double> wallErrors, referencedErrors;
  for (const LayoutTrial& trial : trials) {
    const layout::Layout& l = trial.layout;
    t.rows.push_back({runName(l), std::to_string(l.microBatches), std::to_string(l.microBatchSize),
                      l.recompute ? "yes" : "no", formatMs(trial.prediction.stepNs),
                      formatMs(trial.measuredStepNs), analysis::formatPercent(trial.stepRelError()),
                      analysis::formatPercent(meanOf(trial.prediction.bubble)),
                      analysis::formatPercent(meanOf(trial.measuredBubble)),
                      formatNumber(trial.bubbleErrorPoints(), 1),
                      analysis::formatPercent(trial.predictedExposedComm()),
                      analysis::formatPercent(trial.measuredExposedComm),
                      formatNumber(trial.exposedCommErrorPoints(), 1)});
    if (speeds) {
      const double e = trial.speedReferencedRelError();
      if (std::isfinite(e)) referencedErrors.push_back(e);
    }
    if (loads) {
      const double wallError =
        trial.measuredStepNs > 0
            ? std::abs(trial.wallCostsStepNs - trial.measuredStepNs) / trial.measuredStepNs
            : 0.0;
      if (trial.background) wallErrors.push_back(wallError);
      t.rows.back().insert(t.rows.back().end(),
                           {trial.background ? formatNumber(*trial.background, 2) : "-",
                            trial.background ? formatMs(trial.wallCostsStepNs) : "-",
                            trial.background ? analysis::formatPercent(wallError) : "-"});
    }
    if (speeds) {
      t.rows.back().insert(
          t.rows.back().end(),
          {trial.speed ? formatNumber(*trial.speed, 3) : "-",
           trial.speed ? analysis::formatPercent(trial.speedReferencedRelError()) : "-"});
    }
  }
  const TrialSummary s = summarizeTrials(trials);
  std::string out = t.render(false);
  out += "layouts: " + std::to_string(trials.size()) + "\n";
  out += "median_rel_error: " + formatNumber(s.medianRelError, 4) + "\n";
  out += "max_rel_error: " + formatNumber(s.maxRelError, 4) + "\n";
  out += "median_bubble_error_points: " + formatNumber(s.medianBubbleErrorPoints, 2) + "\n";
  out += "median_exposed_comm_error_points: " + formatNumber(s.medianExposedCommErrorPoints, 2) +
         "\n";
  out += "rank_correlation: " + formatNumber(s.rankCorrelation, 3) + "\n";
  if (loads) out += "median_rel_error_wall_costs: " + formatNumber(median(wallErrors), 4) + "\n";
  if (speeds) {
    out += "median_rel_error_speed_referenced: " + formatNumber(median(referencedErrors), 4) + "\n";
  }
  return out;
}

}  // namespace bubblescope::cli
