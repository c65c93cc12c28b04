// `bubblescope-cli bench advice`: does the advice's predicted gain hold?
// (issue 35 point 5; docs/prediction.md, "Advice, measured"). For each of a
// set of deliberately poor layouts it really runs the layout (`run`, as a
// user would), analyses the run with advice (the same as `report`: rules
// over the run, gains predicted from a calibration of the run itself),
// takes the first suggestion that names a layout (advice_trial.h), really
// runs that layout too (then both again by turns, --repeats), and prints
// predicted against measured gain in tokens/s with the summary keys trials,
// suggestions, within_10_points,
// median_gain_error_points and max_gain_error_points, and the load average
// before and after.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/advice_trial.h"
#include "cli/commands.h"
#include "cli/layout_trial.h"
#include "cli/load_average.h"
#include "cli/run_description.h"
#include "common/median.h"
#include "storage/analysis/run_analyzer.h"
#include "storage/trace_reader.h"

namespace bubblescope::cli {
namespace {

struct BenchAdviceArgs {
  std::string model = "small";
  int32_t steps = 6;
  int32_t repeats = 3;  // runs of each layout, before and after interleaved
  std::string dir = "bench-advice";
  std::vector<std::string> only;  // ids of the poor layouts to run (empty: all)
  bool echo = false;
};

int fail(const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

struct PoorLayout {
  std::string id;
  std::string name;
  layout::Layout layout;
  std::string rule;  // the advice rule it is poor for (advice_trial.h takes its advice first)
  // The budget the advice is given (report --memory-per-rank); none: no budget.
  std::optional<double> memoryPerRankBytes;
};

// Poor on 2 cores, each for a reason the advice has a rule for (the last
// with the memory budget memory_headroom needs).
std::vector<PoorLayout> poorLayouts(const layout::Layout& base) {
  std::vector<PoorLayout> out;
  layout::Layout l = base;
  l.dp = 2;
  l.microBatches = 4;
  l.bucketElements = 1000;  // thousands of all-reduces a step, each paying its latency
  out.push_back({"small-buckets", "dp2 m4, 1000-element buckets", l, "comm_share"});
  l = base;
  l.pp = 2;
  l.schedule = layout::ScheduleKind::kGPipe;
  l.microBatches = 2;  // bubble (p-1)/(m+p-1) = 1/3
  out.push_back({"few-micro-batches", "pp2 gpipe m2", l, "few_micro_batches"});
  l = base;
  l.dp = 2;
  l.microBatches = 4;
  l.zeroStage = layout::ZeroStage::kParameters;  // gathers and reduce-scatters per micro-batch
  out.push_back({"zero3", "dp2 m4 ZeRO-3", l, "comm_share"});
  l = base;
  l.tp = 2;
  l.microBatches = 4;  // two all-reduces per layer and micro-batch
  out.push_back({"tp2", "tp2 m4", l, "comm_share"});
  l = base;
  l.dp = 2;
  l.microBatches = 4;
  l.recompute = true;  // a forward again per micro-batch, for memory it has to spare
  out.push_back(
      {"recompute", "dp2 m4 recompute, 1 GiB a rank", l, "memory_headroom", 1024.0 * 1024 * 1024});
  return out;
}

Result<double> measuredStepNs(const layout::Layout& l, const std::string& trace, int64_t run) {
  BS_ASSIGN_OR_RETURN(const LayoutTrial t, measuredTrial(l, layout::Prediction{}, trace, run));
  return t.measuredStepNs;
}

// The poor layout's first run is analysed for the advice; with repeats > 1
// the two layouts then run by turns (before, after, before, ...) and the
// gain is the median over each after run against its neighbours, so a
// machine that drifts between runs (a VM's neighbours) moves both sides of
// each ratio alike instead of showing as a gain.
Result<AdviceTrial> adviceTrial(const PoorLayout& poor, const std::string& trace, bool echo,
                                int32_t repeats) {
  AdviceTrial t;
  t.name = poor.name;
  t.before = poor.layout;
  std::fprintf(stderr, "bench advice: running %s ...\n", poor.name.c_str());
  BS_ASSIGN_OR_RETURN(t.beforeRun, runLayout(poor.layout, trace, echo, "poor: " + poor.name));
  BS_ASSIGN_OR_RETURN(t.beforeStepNs, measuredStepNs(poor.layout, trace, t.beforeRun));
  analysis::RunReport report;
  {
    BS_ASSIGN_OR_RETURN(auto reader, storage::TraceReader::open(trace));
    analysis::AnalysisOptions options;
    options.advice = true;
    options.adviceOptions.memoryPerRankBytes = poor.memoryPerRankBytes;
    BS_ASSIGN_OR_RETURN(report, analysis::analyzeRun(*reader, t.beforeRun, options));
  }
  const analysis::Advice* advice = actionableAdvice(report.advice, poor.rule);
  if (advice == nullptr) return t;
  t.rule = advice->rule;
  t.dimension = advice->dimension;
  t.change = advice->change;
  t.after = *advice->layout;
  t.predictedGain = advice->predicted->gain();
  t.after->steps = poor.layout.steps;
  std::fprintf(stderr, "bench advice: running the advice (%s) ...\n", t.change.c_str());
  BS_ASSIGN_OR_RETURN(t.afterRun, runLayout(*t.after, trace, echo, "advised: " + t.change));
  BS_ASSIGN_OR_RETURN(t.afterStepNs, measuredStepNs(*t.after, trace, t.afterRun));
  std::vector<double> before = {t.beforeStepNs}, after = {t.afterStepNs};
  for (int32_t i = 1; i < repeats; ++i) {
    std::fprintf(stderr, "bench advice: running both again (%d of %d) ...\n", i + 1, repeats);
    BS_ASSIGN_OR_RETURN(const int64_t b, runLayout(poor.layout, trace, echo, "poor: " + poor.name));
    BS_ASSIGN_OR_RETURN(const double bNs, measuredStepNs(poor.layout, trace, b));
    BS_ASSIGN_OR_RETURN(const int64_t r, runLayout(*t.after, trace, echo, "advised: " + t.change));
    BS_ASSIGN_OR_RETURN(const double aNs, measuredStepNs(*t.after, trace, r));
    before.push_back(bNs);
    after.push_back(aNs);
  }
  t.beforeStepNs = median(before);
  t.afterStepNs = median(after);
  t.beforeStepsNs = before;
  t.afterStepsNs = after;
  t.runs = repeats;
  return t;
}

ExitCode runBenchAdvice(const BenchAdviceArgs& a) {
  auto model = layout::modelPreset(a.model);
  if (!model.isOk()) return fail(model.status().message());
  if (a.steps < 2) {
    return fail("--steps must be >= 2 (the first step is left out), got " +
                std::to_string(a.steps));
  }
  if (a.repeats < 1 || a.repeats > 20) {
    return fail("--repeats must be from 1 to 20, got " + std::to_string(a.repeats));
  }
  layout::Layout base;
  base.model = *model;
  base.steps = a.steps;
  std::vector<PoorLayout> poor;
  for (const PoorLayout& p : poorLayouts(base)) {
    if (a.only.empty() || std::find(a.only.begin(), a.only.end(), p.id) != a.only.end()) {
      poor.push_back(p);
    }
  }
  for (const std::string& id : a.only) {
    bool known = false;
    std::string ids;
    for (const PoorLayout& p : poorLayouts(base)) {
      known = known || p.id == id;
      ids += (ids.empty() ? "" : ", ") + p.id;
    }
    if (!known) return fail("--only: no poor layout '" + id + "' (known: " + ids + ")");
  }
  std::error_code ec;
  std::filesystem::create_directories(a.dir, ec);
  if (ec) return fail("--dir " + a.dir + ": " + ec.message());
  const std::string trace = a.dir + "/bench-advice.db";
  std::filesystem::remove(trace, ec);

  const double loadBefore = loadAverage();
  std::vector<AdviceTrial> trials;
  for (const PoorLayout& p : poor) {
    auto trial = adviceTrial(p, trace, a.echo, a.repeats);
    if (!trial.isOk()) return fail(p.name + ": " + trial.status().message());
    trials.push_back(std::move(*trial));
  }
  std::printf(
      "bench advice: %s, %d steps (the first left out), %d run%s of each layout "
      "(before and after by turns; the gain the median over neighbouring runs), cores: %u, trace "
      "%s\n",
      a.model.c_str(), a.steps, a.repeats, a.repeats == 1 ? "" : "s",
      std::thread::hardware_concurrency(), trace.c_str());
  std::printf("%s", adviceTrialsToText(trials).c_str());
  std::printf("load_average_1m: %.2f before, %.2f after\n", loadBefore, loadAverage());
  return 0;
}

}  // namespace

void addBenchAdvice(Command bench, CommandRunner& runner) {
  auto args = std::make_shared<BenchAdviceArgs>();
  Command cmd = bench.subcommand(
      "advice",
      "Run deliberately poor layouts, take report's advice on each, run it: predicted vs "
      "measured gain");
  cmd.option("--model", args->model, "Model preset").showDefault();
  cmd.option("--steps", args->steps, "Steps per run (the first is left out)").showDefault();
  cmd.option("--repeats", args->repeats,
             "Runs of each layout and its advice, by turns (the gain the median of each run "
             "against its neighbours)")
      .showDefault();
  cmd.option("--dir", args->dir, "Folder of the trace file (replaced)").showDefault();
  cmd.option("--only", args->only,
             "Only these poor layouts (comma-separated: small-buckets, few-micro-batches, zero3, "
             "tp2, recompute)")
      .delimiter(',');
  cmd.flag("--echo", args->echo, "Show the runs' output");
  cmd.callback([args, &runner] { runner = [args] { return runBenchAdvice(*args); }; });
}

}  // namespace bubblescope::cli
