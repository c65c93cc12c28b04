// `bubblescope-cli bench predict`: the prediction's accuracy on this machine
// (docs/prediction.md, "Accuracy"). Calibrates from six measured runs on
// both cores (dp2 ZeRO 0 at m micro-batches of size 1: the layers, the
// all-reduce, the step's time outside ops and the straggler factor; dp2
// ZeRO 1 at m/2 of size 2: the layers at size 2, the reduce-scatter and the
// all-gather; dp2 ZeRO 2 at m of size 1: ZeRO 2/3's gradient bucket cost
// per micro-batch; dp2 ZeRO 3 at m of size 1: its per-layer gathers; tp2
// at m: tp's per-layer all-reduces and the layers at tp 2; pp2 1F1B at m:
// the pipeline's transfers), each scaled to the median speed of its speed
// references (the first run, and dp2 m again after every second layout;
// cli/speed_track.h), merged (layout::mergeCalibrations), then
// predicts and really
// runs a set of layouts that fit 2 cores without oversubscription (single
// rank with varying m, micro-batch size and recompute; dp2 with ZeRO 0-3;
// tp2; pp2 with each schedule; pp2 with recompute), then the twelve layouts
// issue 35 measured the predictor on (issueLayouts: compression, a mixture
// of experts from a dp2 x ep2 calibration run of its own, and two 4-rank
// layouts on the 2 cores), and prints predicted vs measured step time (the
// median of the steps after the first), bubble and exposed communication
// for each, with median_rel_error, max_rel_error (step time),
// median_bubble_error_points, median_exposed_comm_error_points and
// rank_correlation (Spearman of predicted
// against measured tokens/s). calibrate's shared-cores runs (dp4 ZeRO 0
// and 1 on 2 cores, addSharedCores: the collectives and straggling of
// ranks sharing cores) are added apart for the 4-rank layouts. Each layout
// is predicted for the background load the probe finds right before its run
// (planning/contention.h, cli/contention_probe.h) and, as the baseline, from
// the calibration's wall times as measured; the table has both. Last, the
// first calibration layout runs again: machine_drift is its step then over
// its step in the calibration run, minus 1 (a VM whose host got busier
// slows every layout alike, which no prediction made at the start knows).
// The same layout also runs before every third layout: its step over the
// references' median is the machine's speed then (LayoutTrial::speed), and
// median_rel_error_speed_referenced judges the predictions times it, the
// model without the machine's drift; median_rel_error stays the plain one.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cli/calibrate_benchmark.h"
#include "cli/codec_calibration.h"
#include "cli/commands.h"
#include "cli/contention_probe.h"
#include "cli/layout_trial.h"
#include "cli/load_average.h"
#include "cli/run_description.h"
#include "cli/speed_track.h"
#include "cli/trial_scatter.h"
#include "common/median.h"
#include "planning/contention.h"
#include "planning/core_sharing.h"
#include "storage/analysis/calibration_text.h"
#include "storage/analysis/run_calibration.h"
#include "storage/analysis/run_layout.h"
#include "storage/analysis/text_table.h"
#include "storage/calibration_store.h"
#include "storage/trace_reader.h"

namespace bubblescope::cli {
namespace {

struct BenchPredictArgs {
  std::string model = "small";
  int32_t steps = 8;
  int32_t microBatches = 4;
  std::string dir = "bench-predict";
  std::string svg;     // "": no picture
  std::string replay;  // a trace of an earlier bench predict: re-predict its runs
  double replayBackground = 0;  // --replay: the background the runs are predicted for
  int32_t calibrationRepeats = 1;  // runs of each calibration layout (the median's taken)
  bool echo = false;
};

int fail(const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

// The table, the summary keys and, when asked, the scatter titled `title`.
ExitCode printTrials(const std::vector<LayoutTrial>& trials, const std::string& svg,
                     const std::string& title) {
  std::fputs(trialsToText(trials).c_str(), stdout);
  if (svg.empty()) return 0;
  std::ofstream out(svg);
  out << trialScatterSvg(trials, title);
  if (!out) return fail("cannot write " + svg);
  std::printf("scatter: %s\n", svg.c_str());
  return 0;
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

// The model of issue 35's mixture-of-experts layout: the preset with 4
// experts, top-2 routing.
layout::ModelConfig moeModel(layout::ModelConfig m) {
  m.experts = 4;
  m.topK = 2;
  return m;
}

// The twelve layouts issue 35 measured the predictor on (it was not tuned
// on them), at their own m: tp2 m8; pp2 1F1B, GPipe, ZB-H1 and interleaved
// (v 2) at m8; dp2 ZeRO-2 m8; dp2 with recompute, int8 and topk:0.1 at m4;
// dp2 x ep2 of the preset with 4 experts, top-2, m4; and two of 4 ranks on
// the 2 cores, dp2 x pp2 1F1B m8 and dp4 m4.
std::vector<layout::Layout> issueLayouts(const layout::Layout& base) {
  std::vector<layout::Layout> out;
  auto add = [&](int32_t m, auto&& edit) {
    layout::Layout l = base;
    l.microBatches = m;
    edit(l);
    out.push_back(l);
  };
  add(8, [](layout::Layout& l) { l.tp = 2; });
  for (layout::ScheduleKind s : layout::allScheduleKinds()) {
    add(8, [&](layout::Layout& l) {
      l.pp = 2;
      l.schedule = s;
      if (s == layout::ScheduleKind::kInterleaved) l.virtualChunks = 2;
    });
  }
  add(8, [](layout::Layout& l) {
    l.dp = 2;
    l.zeroStage = layout::ZeroStage::kGradients;
  });
  add(4, [](layout::Layout& l) {
    l.dp = 2;
    l.recompute = true;
  });
  for (const char* c : {"int8", "topk:0.1"}) {
    add(4, [&](layout::Layout& l) {
      l.dp = 2;
      l.gradCompression = layout::parseGradCompression(c).value();
    });
  }
  add(4, [](layout::Layout& l) {
    l.model = moeModel(l.model);
    l.dp = 2;
    l.ep = 2;
  });
  add(8, [](layout::Layout& l) {
    l.dp = 2;
    l.pp = 2;
  });
  add(4, [](layout::Layout& l) { l.dp = 4; });
  return out;
}

// --replay F: the current model's predictions of the runs an earlier bench
// predict measured into F, against what they measured then (F is only
// read). The calibration runs are F's runs named "calibrate ...", or its
// first run (bench predict calibrated from one run before). The dense
// layouts take the calibration that bench stored in F (its name starts
// "bench predict: runs": the runs merged, the shared-cores runs, the codec
// costs and the background, as the bench used them), else one merged from
// the calibration runs here; predicted for --background B (0: a quiet
// machine) from thread CPU time when the calibration recorded a background.
ExitCode replayBenchPredict(const BenchPredictArgs& a) {
  if (!(a.replayBackground >= 0) || !std::isfinite(a.replayBackground)) {
    return fail("--background must be a number of busy threads >= 0, got " +
                std::to_string(a.replayBackground));
  }
  auto reader = storage::TraceReader::open(a.replay);
  if (!reader.isOk()) return fail(reader.status().message());
  auto runs = (*reader)->runs();
  if (!runs.isOk()) return fail(runs.status().message());
  std::vector<storage::RunRecord> measured;
  for (const storage::RunRecord& r : *runs) {
    if (!r.info.simulated && !r.info.imported && r.status == storage::RunStatus::kFinished) {
      measured.push_back(r);
    }
  }
  if (measured.empty()) return fail(a.replay + " holds no finished measured run");
  std::vector<int64_t> calibrationRuns;
  for (const storage::RunRecord& r : measured) {
    if (r.info.name.rfind("calibrate ", 0) == 0) calibrationRuns.push_back(r.id);
  }
  if (calibrationRuns.empty()) calibrationRuns.push_back(measured.front().id);
  // A mixture of experts is predicted from the calibration runs of one;
  // the shared-cores runs are added apart (layout::withSharedCores).
  std::vector<layout::Calibration> parts, moeParts, sharedParts;
  std::string names;
  for (int64_t id : calibrationRuns) {
    auto c = analysis::calibrateFromRun(**reader, id);
    if (!c.isOk()) return fail(c.status().message());
    const bool shared = std::any_of(measured.begin(), measured.end(), [&](const auto& r) {
      return r.id == id && isSharedCoresRun(r.info.name);
    });
    if (shared) {
      sharedParts.push_back(sharedCoresPart(std::move(*c)));
    } else {
      (c->model.hasMoe() ? moeParts : parts).push_back(std::move(*c));
    }
    names += (names.empty() ? "" : ", ") + std::to_string(id);
  }
  if (parts.empty()) return fail(a.replay + " holds no calibration run of a dense model");
  layout::Calibration calibration = layout::mergeCalibrations(parts);
  if (!sharedParts.empty()) {
    calibration =
        layout::withSharedCores(std::move(calibration), layout::mergeCalibrations(sharedParts));
  }
  layout::Calibration moeCalibration =
      moeParts.empty() ? calibration : layout::mergeCalibrations(moeParts);
  auto stored = storage::loadCalibrations(a.replay);
  if (!stored.isOk()) return fail(stored.status().message());
  std::string source = "merged here";
  for (const layout::Calibration& c : *stored) {
    if (c.name.rfind("bench predict: runs", 0) != 0) continue;
    calibration = c;  // the newest wins
    source = "the one the bench stored, calibration_id " + std::to_string(c.id);
  }
  if (auto b = layout::recordedBackground(calibration); b && !moeParts.empty()) {
    moeCalibration = layout::withBackground(std::move(moeCalibration), *b);
  }
  layout::PredictOptions options;
  if (layout::recordedBackground(calibration)) options.background = a.replayBackground;
  std::printf("replay of %s: calibration runs %s (measured when the file was written); dense "
              "layouts: %s; predicted for a background of %.2f\n",
              a.replay.c_str(), names.c_str(), source.c_str(), options.background.value_or(0.0));
  std::vector<LayoutTrial> trials;
  for (const storage::RunRecord& r : measured) {
    if (std::count(calibrationRuns.begin(), calibrationRuns.end(), r.id) > 0) continue;
    if (r.info.name.rfind("drift check ", 0) == 0) continue;
    if (r.info.name.rfind("speed reference ", 0) == 0) continue;
    const auto l = analysis::runLayout(r.info.layoutJson, r.info.modelJson);
    if (!l) continue;
    auto prediction =
        layout::predictLayout(*l, l->model.hasMoe() ? moeCalibration : calibration, options);
    if (!prediction.isOk()) return fail(runName(*l) + ": " + prediction.status().message());
    auto trial = measuredTrial(*l, *prediction, a.replay, r.id);
    if (!trial.isOk()) return fail(trial.status().message());
    trials.push_back(std::move(*trial));
  }
  return printTrials(trials, a.svg, "bench predict --replay: calibrated from run " + names);
}

ExitCode runBenchPredict(const BenchPredictArgs& a) {
  if (!a.replay.empty()) return replayBenchPredict(a);
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
  // The calibration runs: dp2 measures the compute of 2 busy cores.
  layout::Layout sizeOne = base;
  sizeOne.dp = 2;
  layout::Layout sizeTwo = sizeOne;
  sizeTwo.zeroStage = layout::ZeroStage::kOptimizer;
  sizeTwo.microBatches = a.microBatches / 2;
  sizeTwo.microBatchSize = 2;
  // ZeRO 2's per-micro-batch gradient buckets (layout::kZeroBucketPart);
  // merged last, so only what the first two lack comes from it.
  layout::Layout zeroTwo = sizeOne;
  zeroTwo.zeroStage = layout::ZeroStage::kGradients;
  // ZeRO 3's per-layer parameter gathers (layout::kMicroBatchAllGather).
  layout::Layout zeroThree = sizeOne;
  zeroThree.zeroStage = layout::ZeroStage::kParameters;
  // tp 2: tp's per-layer all-reduces and the layers at tp 2.
  layout::Layout tpTwo = base;
  tpTwo.tp = 2;
  // pp 2 (1F1B): the pipeline's transfers (the pp p2p fit), each of which
  // waits for the receiving rank's turn on a busy machine.
  layout::Layout ppTwo = base;
  ppTwo.pp = 2;
  ppTwo.schedule = layout::ScheduleKind::kOneFOneB;
  // The background the calibration runs meet (planning/contention.h): the
  // median of the probe's readings before and after each of them, so one
  // transient (the ranks of a run that just ended still exiting read 0.39
  // before a quiet calibration, whose ops ran at 1.01x their CPU time, and
  // took every prediction 8 % low) does not stand for the whole calibration.
  auto before = measureBackground();
  if (!before.isOk()) return fail(before.status().message());
  std::vector<double> readings = {before->background};
  std::vector<layout::Calibration> parts;
  std::vector<int64_t> calibrationRuns;
  const std::vector<layout::Layout> calibrationLayouts = {sizeOne,   sizeTwo, zeroTwo,
                                                          zeroThree, tpTwo,   ppTwo};
  // Speed references, as `calibrate --model` has them (cli/speed_track.h):
  // the first layout's calibration run, and that layout again after every
  // second one; each part's costs are scaled to the references' median
  // speed, so one run that met a slow spell of the VM does not price every
  // layout that reads its costs.
  SpeedTrack calibrationSpeed;
  auto reference = [&](double position) -> Status {
    BS_ASSIGN_OR_RETURN(const int64_t id, runLayout(sizeOne, trace, a.echo,
                                                    "speed reference " + runName(sizeOne) + " b1"));
    BS_ASSIGN_OR_RETURN(const LayoutTrial t,
                        measuredTrial(sizeOne, layout::Prediction{}, trace, id));
    calibrationSpeed.add(position, t.measuredStepNs);
    return Status::ok();
  };
  for (const layout::Layout& l : calibrationLayouts) {
    // --calibration-repeats N: N runs of the layout; the one of the median
    // step is calibrated from (one run that met a slow spell of the machine
    // would otherwise price every layout that reads its costs).
    const std::string name = "calibrate " + runName(l) + " b" + std::to_string(l.microBatchSize);
    std::vector<std::pair<double, int64_t>> steps;  // (measured step, run)
    for (int32_t i = 0; i < a.calibrationRepeats; ++i) {
      auto r = runLayout(l, trace, a.echo, i == 0 ? name : "calibrate repeat " + name.substr(10));
      if (!r.isOk()) return fail(r.status().message());
      auto t = measuredTrial(l, layout::Prediction{}, trace, *r);
      if (!t.isOk()) return fail(t.status().message());
      steps.emplace_back(t->measuredStepNs, *r);
    }
    std::sort(steps.begin(), steps.end());
    const int64_t run = steps[(steps.size() - 1) / 2].second;
    const size_t k = parts.size();
    if (k == 0) calibrationSpeed.add(0, steps[(steps.size() - 1) / 2].first);
    auto reader = storage::TraceReader::open(trace);
    if (!reader.isOk()) return fail(reader.status().message());
    auto c = analysis::calibrateFromRun(**reader, run);
    if (!c.isOk()) return fail(c.status().message());
    parts.push_back(std::move(*c));
    calibrationRuns.push_back(run);
    if (k % 2 == 1) {
      if (Status s = reference(k + 0.5); !s.isOk()) return fail(s.message());
    }
    auto probe = measureBackground();
    if (!probe.isOk()) return fail(probe.status().message());
    readings.push_back(probe->background);
  }
  double lowFactor = 1, highFactor = 1;
  for (size_t k = 0; k < parts.size(); ++k) {
    const double f = calibrationSpeed.factor(static_cast<double>(k));
    lowFactor = std::min(lowFactor, f);
    highFactor = std::max(highFactor, f);
    parts[k] = layout::withTimesScaled(std::move(parts[k]), f);
  }
  const double calibrationBackground = median(readings);
  layout::Calibration calibration =
      layout::withBackground(layout::mergeCalibrations(parts), calibrationBackground);
  // The 4-rank layouts share the cores: calibrate's shared-cores runs.
  if (Status shared = addSharedCores(calibration, *model, 2, trace, a.steps); !shared.isOk()) {
    return fail(shared.message());
  }
  if (Status codecs = addCodecCosts(calibration, /*progress=*/true); !codecs.isOk())
    return fail(codecs.message());
  std::string runs, described;
  for (size_t i = 0; i < calibrationRuns.size(); ++i) {
    const std::string sep = i == 0 ? "" : i + 1 == calibrationRuns.size() ? " and " : ", ";
    runs += sep + std::to_string(calibrationRuns[i]);
    described += sep + std::to_string(calibrationRuns[i]) + " (" + runName(calibrationLayouts[i]) +
                 " b" + std::to_string(calibrationLayouts[i].microBatchSize) + ")";
  }
  calibration.name = "bench predict: runs " + runs;
  auto id = storage::saveCalibration(trace, calibration);
  if (!id.isOk()) return fail(id.status().message());
  std::printf("calibration: runs %s, calibration_id %lld in %s\n", described.c_str(),
              static_cast<long long>(*id), trace.c_str());
  std::string refs;
  for (const auto& [position, ns] : calibrationSpeed.references()) {
    refs += (refs.empty() ? "" : ", ") + analysis::formatMs(ns);
  }
  std::printf(
      "speed references (%s b1): %s ms a step; each calibration run's costs scaled to "
      "their median, %s ms (by %.3f to %.3f)\n",
      runName(sizeOne).c_str(), refs.c_str(), analysis::formatMs(calibrationSpeed.median()).c_str(),
      lowFactor, highFactor);
  std::printf("straggler_factor: %.3f, outside_ops_ns_per_parameter: %.3f\n",
              calibration.stragglerFactor(false),
              calibration.perParameterNs("step", "other", false).value_or(0.0));
  std::printf(
      "background: %.2f before the calibration runs, %.2f after, %.2f their median of "
      "%zu readings; own_overhead: %.3f\n",
      readings.front(), readings.back(), calibrationBackground, readings.size(),
      layout::ownOverhead(calibration));

  // The mixture of experts' own calibration: a dp2 x ep2 run of it (its
  // layers, all-to-alls and all-reduces), the dense runs' costs after it.
  layout::Layout moeRun = sizeOne;
  moeRun.model = moeModel(base.model);
  moeRun.ep = 2;
  auto moeRunId = runLayout(moeRun, trace, a.echo, "calibrate " + runName(moeRun) + " b1");
  if (!moeRunId.isOk()) return fail(moeRunId.status().message());
  layout::Calibration moeCalibration;
  {
    auto reader = storage::TraceReader::open(trace);
    if (!reader.isOk()) return fail(reader.status().message());
    auto c = analysis::calibrateFromRun(**reader, *moeRunId);
    if (!c.isOk()) return fail(c.status().message());
    auto moeAfter = measureBackground();
    if (!moeAfter.isOk()) return fail(moeAfter.status().message());
    // At the speed of the last reference (the nearest before it).
    moeCalibration = layout::withBackground(
        layout::withTimesScaled(std::move(*c),
                                calibrationSpeed.factor(static_cast<double>(parts.size()))),
        (readings.back() + moeAfter->background) / 2);
  }
  std::printf("calibration of the mixture of experts: run %lld (%s b1)\n",
              static_cast<long long>(*moeRunId), runName(moeRun).c_str());

  std::vector<layout::Layout> layouts = benchLayouts(base);
  for (const layout::Layout& l : issueLayouts(base)) layouts.push_back(l);
  // The machine's speed: every kSpeedReferenceEvery layouts the first
  // calibration layout runs again, its step over the speed the calibration
  // stands for, the references' median (LayoutTrial::speed; the
  // predictions stay the calibration's).
  auto calibrated = measuredTrial(sizeOne, layout::Prediction{}, trace, calibrationRuns.front());
  if (!calibrated.isOk()) return fail(calibrated.status().message());
  const double calibratedNs = calibrationSpeed.median();
  constexpr size_t kSpeedReferenceEvery = 3;
  double speed = 1.0;
  std::vector<LayoutTrial> trials;
  for (const layout::Layout& l : layouts) {
    if (trials.size() % kSpeedReferenceEvery == 0 && calibratedNs > 0) {
      auto ref = runLayout(sizeOne, trace, a.echo, "speed reference " + runName(sizeOne) + " b1");
      if (!ref.isOk()) return fail(ref.status().message());
      auto refTrial = measuredTrial(sizeOne, layout::Prediction{}, trace, *ref);
      if (!refTrial.isOk()) return fail(refTrial.status().message());
      speed = refTrial->measuredStepNs / calibratedNs;
    }
    // Predicted for the background the probe finds right before the run,
    // and from the wall times as measured (the baseline, same run).
    const layout::Calibration& c = l.model.hasMoe() ? moeCalibration : calibration;
    auto load = measureBackground();
    if (!load.isOk()) return fail(load.status().message());
    layout::PredictOptions options;
    options.background = load->background;
    auto prediction = layout::predictLayout(l, c, options);
    if (!prediction.isOk()) return fail(runName(l) + ": " + prediction.status().message());
    auto wallCosts = layout::predictLayout(l, c);
    if (!wallCosts.isOk()) return fail(runName(l) + ": " + wallCosts.status().message());
    auto trial = runLayoutTrial(l, *prediction, trace, a.echo);
    if (!trial.isOk()) return fail(trial.status().message());
    trial->background = load->background;
    trial->wallCostsStepNs = wallCosts->stepNs;
    trial->speed = speed;
    trials.push_back(std::move(*trial));
    std::fflush(stdout);
  }
  // Did the machine keep its speed? The first calibration layout again,
  // against its calibration run: a VM whose host gets busy slows every
  // layout alike, which no prediction made at the start can know.
  auto drift = runLayout(sizeOne, trace, a.echo, "drift check " + runName(sizeOne) + " b1");
  if (!drift.isOk()) return fail(drift.status().message());
  auto driftTrial = measuredTrial(sizeOne, layout::Prediction{}, trace, *drift);
  if (!driftTrial.isOk()) return fail(driftTrial.status().message());
  const double startNs = calibrated->measuredStepNs, endNs = driftTrial->measuredStepNs;
  std::printf("model: %s, %d steps (the first left out), cores: %u\n", a.model.c_str(), a.steps,
              std::thread::hardware_concurrency());
  std::printf(
      "drift check: %s m%d measured %.1f ms in the first calibration run, %.1f ms after "
      "the layouts\n",
      runName(sizeOne).c_str(), sizeOne.microBatches, startNs / 1e6, endNs / 1e6);
  std::printf("machine_drift: %+.4f\n", startNs > 0 ? endNs / startNs - 1 : 0.0);
  std::printf("load_average_1m: %.2f before, %.2f after\n", loadBefore, loadAverage());
  return printTrials(trials, a.svg,
                     "bench predict: " + a.model + ", calibrated from " + runName(sizeOne) + " m" +
                         std::to_string(a.microBatches) + " b1 and " + runName(sizeTwo) + " m" +
                         std::to_string(sizeTwo.microBatches) + " b2");
}

}  // namespace

void addBenchPredict(Command bench, CommandRunner& runner) {
  auto args = std::make_shared<BenchPredictArgs>();
  Command cmd = bench.subcommand(
      "predict",
      "Calibrate from a few runs, then predict and run 27 layouts: the prediction's error");
  cmd.option("--model", args->model, "Model preset").showDefault();
  cmd.option("--steps", args->steps, "Steps per run (the first is left out)").showDefault();
  cmd.option("--micro-batches", args->microBatches,
             "m of the layouts and of the size-1 calibration run (even)")
      .showDefault();
  cmd.option("--dir", args->dir, "Folder of the trace file (replaced)").showDefault();
  cmd.option("--svg", args->svg, "Write the predicted-vs-measured scatter here");
  cmd.option("--replay", args->replay,
             "Re-predict the runs of an earlier bench predict's trace file (no new runs)");
  cmd.option("--background", args->replayBackground,
             "--replay: predict for this many busy threads of other work")
      .showDefault();
  cmd.option("--calibration-repeats", args->calibrationRepeats,
             "Runs of each calibration layout; the run of the median step is calibrated from")
      .showDefault()
      .range(1, 9);
  cmd.flag("--echo", args->echo, "Show the runs' output");
  cmd.callback([args, &runner] { runner = [args] { return runBenchPredict(*args); }; });
}

}  // namespace bubblescope::cli
