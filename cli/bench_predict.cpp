// `bubblescope-cli bench predict`: the prediction's accuracy on this machine
// (docs/prediction.md, "Accuracy"). Calibrates from one measured run (dp2,
// ZeRO 0, m micro-batches), then predicts and really runs a set of layouts
// that fit 2 cores without oversubscription (single rank with varying m,
// micro-batch size and recompute; dp2 with ZeRO 0-3; tp2; pp2 with each
// schedule; pp2 with recompute) and prints predicted vs measured step time
// and bubble for each, with median_rel_error, max_rel_error (step time) and
// median_bubble_error_points.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cli/commands.h"
#include "cli/layout_trial.h"
#include "cli/run_description.h"
#include "cli/trial_scatter.h"
#include "storage/analysis/calibration_text.h"
#include "storage/analysis/run_calibration.h"
#include "storage/calibration_store.h"
#include "storage/trace_reader.h"

namespace bubblescope::cli {
namespace {

struct BenchPredictArgs {
  std::string model = "small";
  int32_t steps = 4;
  int32_t microBatches = 4;
  std::string dir = "bench-predict";
  std::string svg;  // "": no picture
  bool echo = false;
};

// The 1-minute load average (/proc/loadavg); -1 when unreadable. Other
// processes on the machine stretch the wall times measured.
double loadAverage() {
  std::ifstream in("/proc/loadavg");
  double load = -1;
  in >> load;
  return in ? load : -1.0;
}

// The layouts measured: every kind the issue lists, at most 2 ranks.
std::vector<layout::Layout> benchLayouts(const layout::Layout& base) {
  std::vector<layout::Layout> out;
  auto add = [&](auto&& edit) {
    layout::Layout l = base;
    edit(l);
    out.push_back(l);
  };
  const int32_t m = base.microBatches;
  add([&](layout::Layout& l) { l.microBatches = 1; });
  add([&](layout::Layout&) {});
  add([&](layout::Layout& l) { l.microBatches = 2 * m; });
  add([&](layout::Layout& l) {
    l.microBatches = m / 2;
    l.microBatchSize = 2;
  });
  add([&](layout::Layout& l) { l.recompute = true; });
  for (auto z : {layout::ZeroStage::kNone, layout::ZeroStage::kOptimizer,
                 layout::ZeroStage::kGradients, layout::ZeroStage::kParameters}) {
    add([&](layout::Layout& l) {
      l.dp = 2;
      l.zeroStage = z;
    });
  }
  add([&](layout::Layout& l) { l.tp = 2; });
  for (layout::ScheduleKind s : layout::allScheduleKinds()) {
    add([&](layout::Layout& l) {
      l.pp = 2;
      l.schedule = s;
      if (s == layout::ScheduleKind::kInterleaved) l.virtualChunks = 2;
    });
  }
  add([&](layout::Layout& l) {
    l.pp = 2;
    l.recompute = true;
  });
  return out;
}

ExitCode runBenchPredict(const BenchPredictArgs& a) {
  auto fail = [](const std::string& message) {
    std::fprintf(stderr, "error: %s\n", message.c_str());
    return 1;
  };
  auto model = layout::modelPreset(a.model);
  if (!model.isOk()) return fail(model.status().message());
  if (a.steps < 2)
    return fail("--steps must be >= 2 (the first step is left out), got " +
                std::to_string(a.steps));
  if (a.microBatches < 2 || a.microBatches % 2 != 0) {
    return fail("--micro-batches must be even and >= 2, got " + std::to_string(a.microBatches));
  }
  std::error_code ec;
  std::filesystem::create_directories(a.dir, ec);
  if (ec) return fail("--dir " + a.dir + ": " + ec.message());
  const std::string trace = a.dir + "/bench-predict.db";
  std::filesystem::remove(trace, ec);

  const double loadBefore = loadAverage();
  layout::Layout base;
  base.model = *model;
  base.steps = a.steps;
  base.microBatches = a.microBatches;
  // The calibration run: dp2 measures the compute of 2 busy cores and the
  // data-parallel all-reduce.
  layout::Layout calibrationLayout = base;
  calibrationLayout.dp = 2;
  auto calibrationRun = runLayout(calibrationLayout, trace, a.echo);
  if (!calibrationRun.isOk()) return fail(calibrationRun.status().message());
  layout::Calibration calibration;
  {
    auto reader = storage::TraceReader::open(trace);
    if (!reader.isOk()) return fail(reader.status().message());
    auto c = analysis::calibrateFromRun(**reader, *calibrationRun);
    if (!c.isOk()) return fail(c.status().message());
    calibration = *c;
  }
  auto id = storage::saveCalibration(trace, calibration);
  if (!id.isOk()) return fail(id.status().message());
  std::printf("calibration: run %lld (%s), calibration_id %lld in %s\n",
              static_cast<long long>(*calibrationRun), runName(calibrationLayout).c_str(),
              static_cast<long long>(*id), trace.c_str());

  std::vector<LayoutTrial> trials;
  for (const layout::Layout& l : benchLayouts(base)) {
    auto prediction = layout::predictLayout(l, calibration);
    if (!prediction.isOk()) return fail(runName(l) + ": " + prediction.status().message());
    auto trial = runLayoutTrial(l, *prediction, trace, a.echo);
    if (!trial.isOk()) return fail(trial.status().message());
    trials.push_back(std::move(*trial));
    std::fflush(stdout);
  }
  std::printf("model: %s, %d steps (the first left out), cores: %u\n", a.model.c_str(), a.steps,
              std::thread::hardware_concurrency());
  std::fputs(trialsToText(trials).c_str(), stdout);
  std::printf("load_average_1m: %.2f before, %.2f after\n", loadBefore, loadAverage());
  if (!a.svg.empty()) {
    std::ofstream out(a.svg);
    out << trialScatterSvg(trials, "bench predict: " + a.model + ", calibrated from " +
                                       runName(calibrationLayout) + " m" +
                                       std::to_string(a.microBatches));
    if (!out) return fail("cannot write " + a.svg);
    std::printf("scatter: %s\n", a.svg.c_str());
  }
  return 0;
}

}  // namespace

void addBenchPredict(CLI::App& bench, CommandRunner& runner) {
  auto args = std::make_shared<BenchPredictArgs>();
  CLI::App* cmd = bench.add_subcommand(
      "predict", "Calibrate from one run, then predict and run 15 layouts: the prediction's error");
  cmd->add_option("--model", args->model, "Model preset")->capture_default_str();
  cmd->add_option("--steps", args->steps, "Steps per run (the first is left out)")
      ->capture_default_str();
  cmd->add_option("--micro-batches", args->microBatches, "m of the calibration run (even)")
      ->capture_default_str();
  cmd->add_option("--dir", args->dir, "Folder of the trace file (replaced)")->capture_default_str();
  cmd->add_option("--svg", args->svg, "Write the predicted-vs-measured scatter here");
  cmd->add_flag("--echo", args->echo, "Show the runs' output");
  cmd->callback([args, &runner] { runner = [args] { return runBenchPredict(*args); }; });
}

}  // namespace bubblescope::cli
