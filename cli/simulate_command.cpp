// `bubblescope-cli simulate`: the schedule simulator over a layout's op lists
// (the same layout flags as `run`), written into --trace as a simulated run.
// With --calibration the op costs are a calibration's (docs/prediction.md);
// with --hardware H the cluster cost model's on GPUs of profile H
// (planning/cluster_cost.h), so a planned cluster run opens in the app
// beside a measured or imported one (`compare`).
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cluster_text.h"
#include "cli/commands.h"
#include "cli/contention_probe.h"
#include "cli/layout_flags.h"
#include "cli/prediction_text.h"
#include "cli/run_description.h"
#include "common/value_range.h"
#include "planning/cluster_cost.h"
#include "engine/layout/layout.h"
#include "storage/simulated_run.h"

namespace bubblescope::cli {
namespace {

constexpr int32_t kMaxSimulatedSteps = 100000;

struct SimulateArgs {
  LayoutFlags layout;
  std::string trace;
  std::string name;
  std::string costs = "1:1:1:0.05:1.5:0.3";
  double unitMs = 1.0;
  std::string calibration;  // a trace file holding a calibration
  int64_t calibrationId = 0;
  std::string hardware;  // a hardware profile: the cluster cost model
  std::string dtype = "fp16";
  std::string background;  // "": none; "measure"; or a count of busy threads
};


// "F:B:W:comm[:grad_sync[:optimizer]]": costs of one forward (of a whole
// stage), input-gradient and weight-gradient backward halves (a fused backward
// costs B + W), a pipeline transfer, the gradient collective and the
// optimizer step; missing trailing fields are 0.
Result<layout::CostModel> parseCosts(const std::string& text) {
  std::vector<double> v;
  std::stringstream in(text);
  std::string field;
  while (std::getline(in, field, ':')) {
    BS_ASSIGN_OR_RETURN(const double x,
                        parseInRange<double>("--costs", field, 0.0, highestValue<double>()));
    v.push_back(x);
  }
  if (v.size() < 4 || v.size() > 6) {
    return Status::invalidArgument("--costs '" + text +
                                   "' needs 4 to 6 numbers: F:B:W:comm[:grad_sync[:optimizer]]");
  }
  v.resize(6, 0.0);
  layout::CostModel c;
  c.forward = v[0];
  c.backwardInput = v[1];
  c.backwardWeight = v[2];
  c.comm = v[3];
  c.gradSync = v[4];
  c.optimizer = v[5];
  return c;
}

ExitCode simulateRun(const SimulateArgs& a) {
  auto fail = [](int code, const std::string& message) {
    std::fprintf(stderr, "error: %s\n", message.c_str());
    return code;
  };
  auto json = layoutJson(a.layout);
  if (!json.isOk()) return fail(2, json.status().message());
  auto parsed = layout::layoutFromJson(*json);
  if (!parsed.isOk()) return fail(2, parsed.status().message());
  // Every step of every rank is written: 2000000000 steps wrote 443 MB in
  // 30 s before anything said no.
  if (Status steps = checkRange<int32_t>("steps", parsed->steps, 1, kMaxSimulatedSteps);
      !steps.isOk()) {
    return fail(2, steps.message() + " (simulate writes every step of every rank)");
  }
  storage::SimulatedRunOptions options;
  options.name = a.name;
  if (!a.hardware.empty()) {
    auto hw = layout::loadHardware(a.hardware);
    if (!hw.isOk()) return fail(2, hw.status().message());
    layout::ClusterSettings settings;
    settings.dtype = a.dtype;
    auto prediction = layout::predictCluster(*parsed, *hw, settings);
    if (!prediction.isOk()) return fail(2, prediction.status().message());
    std::fputs(clusterPredictionToText(*parsed, *prediction, *hw, settings).c_str(), stdout);
    options = predictedRunOptions(*prediction);
    options.name = a.name.empty() ? "predicted " + runName(*parsed) + " on " + hw->name : a.name;
  } else if (!a.calibration.empty()) {
    layout::PredictOptions predict;
    if (!a.background.empty()) {
      auto b = backgroundOption(a.background);
      if (!b.isOk()) return fail(2, b.status().message());
      predict.background = *b;
    }
    auto prediction = predictFromFile(*parsed, a.calibration, a.calibrationId, predict);
    if (!prediction.isOk()) return fail(1, prediction.status().message());
    std::fputs(predictionToText(*parsed, *prediction).c_str(), stdout);
    options = predictedRunOptions(*prediction);
    options.name = a.name.empty() ? "predicted " + runName(*parsed) : a.name;
  } else {
    auto costs = parseCosts(a.costs);
    if (!costs.isOk()) return fail(2, costs.status().message());
    options.costs = *costs;
    if (!(a.unitMs > 0)) return fail(2, "--unit-ms must be > 0");
    options.unitNs = static_cast<int64_t>(a.unitMs * 1e6);
  }
  auto writer = storage::TraceWriter::open(a.trace);
  if (!writer.isOk()) return fail(1, "trace file: " + writer.status().message());
  auto runId = storage::writeSimulatedRun(**writer, *parsed, options);
  if (!runId.isOk()) return fail(1, runId.status().message());
  std::printf("run_id: %lld\n", static_cast<long long>(*runId));
  std::printf("simulated %d steps of %lld ranks into %s\n", parsed->steps,
              static_cast<long long>(parsed->worldSize()), a.trace.c_str());
  return 0;
}

}  // namespace

void addSimulateCommand(Command app, CommandRunner& runner) {
  auto a = std::make_shared<SimulateArgs>();
  Command cmd = app.subcommand(
      "simulate", "Replay a layout's schedule with the simulator and write it as a simulated run");
  addLayoutFlags(cmd, a->layout);
  cmd.option("--trace", a->trace, "Trace file (.db) the simulated run is written into").required();
  cmd.option("--name", a->name, "Name of the run (default e.g. 'simulated 1f1b pp4 m8')");
  cmd.option("--costs", a->costs,
             "Op costs F:B:W:comm[:grad_sync[:optimizer]] in units of --unit-ms; a fused "
             "backward costs B+W; the gradient collective runs only when dp > 1")
      .showDefault();
  cmd.option("--unit-ms", a->unitMs, "Milliseconds of one cost unit").showDefault();
  Option calibration =
      cmd.option("--calibration", a->calibration,
                 "Trace file holding a calibration (bubblescope-cli calibrate): predict the "
                 "layout's step from it instead of --costs");
  cmd.option("--calibration-id", a->calibrationId,
             "Which calibration of that file (default: the newest)")
      .needs(calibration);
  cmd.option("--background", a->background,
             "Predict for other work on this machine: 'measure' it now, or N busy threads "
             "(compute from thread CPU time, docs/prediction.md)")
      .needs(calibration);
  Option hardware = cmd.option(
      "--hardware", a->hardware,
      "Predict the layout on GPUs of a hardware profile (a100-40g, a100-80g, h100-sxm, h200, "
      "b200, or a profile JSON file) with the cluster cost model");
  hardware.excludes(calibration);
  cmd.option("--dtype", a->dtype, "The GEMMs' dtype with --hardware (fp16, bf16, fp8, tf32)")
      .showDefault()
      .needs(hardware);
  cmd.callback([a, &runner] { runner = [a] { return simulateRun(*a); }; });
}

}  // namespace bubblescope::cli
