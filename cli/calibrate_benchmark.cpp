#include "cli/calibrate_benchmark.h"

#include "cli/codec_calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <utility>
#include <vector>

#include "cli/layout_trial.h"
#include "cli/run_description.h"
#include "cli/speed_track.h"
#include "common/median.h"
#include "planning/core_sharing.h"
#include "planning/machine_drift.h"
#include "planning/step_end_wait_fit.h"
#include "planning/tp_stretch_fit.h"
#include "storage/analysis/run_calibration.h"
#include "storage/trace_reader.h"

namespace bubblescope::cli {
namespace {

constexpr int64_t kBucketElements = 64 * 1024;  // 256 KiB of fp32

// One run of the micro-benchmark and what its name adds ("" or " over hosts").
struct BenchmarkRun {
  layout::Layout layout;
  std::string where;
};

std::string hostName(const std::string& entry) {
  return entry.substr(0, entry.rfind(':'));
}

// `ranks` ranks on the first host.
std::vector<std::string> onFirstHost(const BenchmarkHosts& h, int32_t ranks) {
  if (h.hosts.empty()) return {};
  return {hostName(h.hosts.front()) + ":" + std::to_string(ranks)};
}

// `ranks` ranks one by one over the hosts: host i of the first
// min(ranks, hosts) gets the ranks r with r mod that count = i.
std::vector<std::string> spread(const BenchmarkHosts& h, int32_t ranks) {
  const auto n = static_cast<int32_t>(std::min<size_t>(h.hosts.size(), ranks));
  std::vector<std::string> out;
  for (int32_t i = 0; i < n; ++i) {
    const int32_t slots = ranks / n + (i < ranks % n ? 1 : 0);
    out.push_back(hostName(h.hosts[i]) + ":" + std::to_string(slots));
  }
  return out;
}

// The micro-benchmark's runs, the layers first (mergeCalibrations keeps the
// first cost of each op: the single-rank runs measure the layers alone).
std::vector<BenchmarkRun> benchmarkRuns(const layout::ModelConfig& model, int32_t world,
                                        int32_t steps, const BenchmarkHosts& h) {
  layout::Layout base;
  base.model = model;
  base.steps = steps;
  base.microBatches = 2;
  std::vector<BenchmarkRun> out;
  for (int32_t b : {1, 2, 4}) {
    layout::Layout l = base;
    l.microBatchSize = b;
    l.recompute = b == 1;  // recompute spans once, at size 1
    l.hosts = onFirstHost(h, 1);
    out.push_back({l, ""});
  }
  if (world < 2) return out;
  std::vector<layout::Layout> collectives;
  for (auto zero : {layout::ZeroStage::kNone, layout::ZeroStage::kOptimizer}) {
    layout::Layout l = base;
    l.dp = world;
    l.zeroStage = zero;
    l.bucketElements = kBucketElements;
    collectives.push_back(l);
  }
  if (model.numHeads % 2 == 0 && !model.hasMoe()) {  // the engine has no tp of MoE blocks
    layout::Layout l = base;
    l.tp = 2;
    collectives.push_back(l);
  }
  // A mixture of experts: its all-to-alls over ep 2 (ep divides dp and E).
  if (model.hasMoe() && world % 2 == 0 && model.experts % 2 == 0) {
    layout::Layout l = base;
    l.dp = world;
    l.ep = 2;
    collectives.push_back(l);
  }
  if (model.numLayers >= 2) {
    layout::Layout l = base;
    l.pp = 2;
    l.schedule = layout::ScheduleKind::kZeroBubbleH1;
    collectives.push_back(l);
  }
  for (layout::Layout& l : collectives) {
    l.hosts = onFirstHost(h, static_cast<int32_t>(l.worldSize()));
    out.push_back({l, ""});
  }
  // ZeRO 2's gradient buckets per micro-batch, at the default bucket size;
  // ZeRO 3's per-layer parameter gathers (layout::kMicroBatchAllGather).
  for (auto zero : {layout::ZeroStage::kGradients, layout::ZeroStage::kParameters}) {
    layout::Layout l = base;
    l.dp = world;
    l.zeroStage = zero;
    l.hosts = onFirstHost(h, world);
    out.push_back({l, ""});
  }
  if (h.hosts.size() < 2) return out;
  for (layout::Layout l : collectives) {  // tp stays inside a host
    if (l.tp > 1) continue;
    l.hosts = spread(h, static_cast<int32_t>(l.worldSize()));
    out.push_back({l, " over hosts"});
  }
  return out;
}

// The shared-cores runs (core_sharing.h): dp 2C on this machine's C cores,
// ZeRO 0 (the all-reduce) and ZeRO 1 (reduce-scatter and all-gather), the
// layout's default buckets (the whole gradient of a small
// model in one: sizes from 8 bytes, the loss, to the gradient, so alpha
// and beta both show; with 256 KiB buckets a time-shared all-reduce is all
// waiting for peers and beta cannot be told apart), at b = 1 (the size the
// layers are measured at first); ZeRO 0 at m = 4, ZeRO 1 and tp at m = 2;
// then dp C x pp 2 at m = 4 (below).
// The ZeRO 0 run is the one the step-end wait is fitted to
// (step_end_wait_fit.h): time-shared ranks drift apart over the step's
// micro-batches, so the wait its last rank makes the others pay grows from
// m = 2 to m = 4 and then holds (on the 2-core VM dp4's residual against
// the model without it: +3 ms a step at m = 2 over seven calibrations, +24
// to +46 ms at m = 4 over six benches, about as much at m = 16 in `plan`).
// Only without hosts and with at most kMaxSharedCores cores (2C ranks is
// one short run, not a crowd).
constexpr int32_t kMaxSharedCores = 8;
// How many times the runs a step is fitted to run (the median one kept):
// time-shared ranks' steps move by 15 % from one run to the next (dp4 on
// the 2 cores: 249.0 and 216.5 ms in two calibrations a minute apart), and
// the fits followed. ZeRO 2's and 3's runs and the tp run too
// (benchmarkCalibration).
constexpr int32_t kFittedRuns = 3;
constexpr const char* kSharedCoresSuffix = " shared cores";  // ends their run names

std::vector<layout::Layout> sharedCoresRuns(const layout::ModelConfig& model, int32_t world,
                                            int32_t steps, int32_t cores,
                                            const BenchmarkHosts& h) {
  if (world < 2 || !h.hosts.empty() || cores < 1 || cores > kMaxSharedCores) return {};
  std::vector<layout::Layout> out;
  // `model` for `steps` steps at m micro-batches on dp ranks.
  auto run = [&](int32_t m, int32_t dp) -> layout::Layout& {
    layout::Layout& l = out.emplace_back();
    l.model = model;
    l.steps = steps;
    l.microBatches = m;
    l.dp = dp;
    return l;
  };
  for (auto zero : {layout::ZeroStage::kNone, layout::ZeroStage::kOptimizer}) {
    run(zero == layout::ZeroStage::kNone ? 4 : 2, 2 * cores).zeroStage = zero;
  }
  // tp 2 x dp C: tp's per-layer all-reduces between ranks that time-share
  // the cores (only its tp fits are kept: addSharedCores).
  if (model.numHeads % 2 == 0 && !model.hasMoe()) run(2, cores).tp = 2;
  // dp C x pp 2 1F1B: a blocked pipeline receive's wake-up between ranks
  // that time-share the cores (layout::kReceiveWake; only its pp fits are
  // kept): 0.87 ms median, 1.43 mean on the 2-core VM against 0.15 with a
  // core per rank.
  if (model.numLayers >= 2) {
    layout::Layout& l = run(4, cores);
    l.pp = 2;
    l.schedule = layout::ScheduleKind::kOneFOneB;
  }
  return out;
}

}  // namespace

namespace {

// A run of the micro-benchmark, calibrated.
struct CalibratedRun {
  layout::Layout layout;
  int64_t runId = -1;
  layout::Calibration part;
  double position = 0;  // in the sequence of runs (calibrate's speed references)
  double speedFactor = 1;  // what its costs were scaled by (SpeedTrack::factor)
};

Result<CalibratedRun> calibratedRun(const layout::Layout& l, const std::string& name,
                                    const std::string& trace,
                                    const std::vector<std::string>& runFlags) {
  BS_RETURN_IF_ERROR(validate(l));
  std::fprintf(stderr, "calibrate: running %s ...\n", name.substr(10).c_str());
  CalibratedRun r;
  r.layout = l;
  BS_ASSIGN_OR_RETURN(r.runId, runLayout(l, trace, false, name, runFlags));
  BS_ASSIGN_OR_RETURN(auto reader, storage::TraceReader::open(trace));
  BS_ASSIGN_OR_RETURN(r.part, analysis::calibrateFromRun(*reader, r.runId));
  return r;
}

// `l` run `times` times, each calibrated: the run of the median step (one
// that met a slow spell of the machine, or a fast one, prices every layout
// that reads its fits otherwise), each of its fits the median over the
// runs (withMedianFits).
Result<CalibratedRun> medianCalibratedRun(const layout::Layout& l, const std::string& name,
                                          const std::string& trace,
                                          const std::vector<std::string>& runFlags,
                                          int32_t times) {
  std::vector<std::pair<double, CalibratedRun>> tries;
  for (int32_t k = 0; k < std::max(1, times); ++k) {
    BS_ASSIGN_OR_RETURN(CalibratedRun r, calibratedRun(l, name, trace, runFlags));
    BS_ASSIGN_OR_RETURN(const LayoutTrial t,
                        measuredTrial(l, layout::Prediction{}, trace, r.runId));
    tries.emplace_back(t.measuredStepNs, std::move(r));
  }
  std::sort(tries.begin(), tries.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<layout::Calibration> parts;
  for (const auto& [step, r] : tries) parts.push_back(r.part);
  CalibratedRun kept = std::move(tries[tries.size() / 2].second);
  if (parts.size() > 1) kept.part = withMedianFits(std::move(kept.part), parts);
  return kept;
}

Result<std::vector<CalibratedRun>> sharedCoresCalibratedRuns(const layout::ModelConfig& model,
                                                             int32_t world,
                                                             const std::string& trace,
                                                             int32_t steps, int32_t cores,
                                                             const BenchmarkHosts& where) {
  std::vector<CalibratedRun> out;
  for (const layout::Layout& l : sharedCoresRuns(model, world, steps, cores, where)) {
    const std::string name = "calibrate " + runName(l) + " b1" + kSharedCoresSuffix;
    // The runs a step is fitted to, every one but ZeRO 1's (the dp run's
    // step-end wait, the tp run's share of the stretch, the pp run's
    // step-end wait), kFittedRuns times: the run of the median step is kept.
    const bool fitted = l.zeroStage == layout::ZeroStage::kNone;
    BS_ASSIGN_OR_RETURN(CalibratedRun r,
                        medianCalibratedRun(l, name, trace, {}, fitted ? kFittedRuns : 1));
    r.part = sharedCoresPart(std::move(r.part));
    out.push_back(std::move(r));
  }
  return out;
}

// A run's measured step (LayoutTrial's) at the speed its costs were scaled to.
Result<double> scaledStepNs(const CalibratedRun& r, const std::string& trace) {
  BS_ASSIGN_OR_RETURN(const LayoutTrial t,
                      measuredTrial(r.layout, layout::Prediction{}, trace, r.runId));
  return t.measuredStepNs * r.speedFactor;
}

// c with the wait at the step-end all-reduce fitted to run's measured step
// times its speedFactor (step_end_wait_fit.h; a pipelined run's as a
// pipeline's own), printed; a fit that fails is said and adds nothing.
Status applyStepEndWait(layout::Calibration& c, const CalibratedRun& run,
                        const std::string& trace) {
  const layout::Layout& l = run.layout;
  const bool pipeline = l.pp > 1;
  BS_ASSIGN_OR_RETURN(const double stepNs, scaledStepNs(run, trace));
  const Result<layout::StepEndWaitFit> wait = layout::fitStepEndWait(l, c, stepNs);
  if (!wait.isOk()) {
    std::fprintf(stderr, "calibrate: warning: %s; %s\n", wait.status().message().c_str(),
                 pipeline ? "pipelines take the dp wait" : "no wait at the step's end is added");
    return Status::ok();
  }
  c = layout::withStepEndWait(std::move(c), wait->nsPerParameter, pipeline);
  std::fprintf(stderr,
               "calibrate: %s on %d cores measured %.1f ms a step, %.1f ms predicted without "
               "a wait at the step-end all-reduce: %s is %.3f ns per parameter\n",
               runName(l).c_str(), c.cores, stepNs / 1e6, wait->predictedWithoutNs / 1e6,
               pipeline ? "a pipeline's wait" : "the wait", wait->nsPerParameter);
  return Status::ok();
}

// c with the shared-cores runs' part (layout::withSharedCores), the dp
// and pp runs' waits at the step-end all-reduce and the tp run's share of the
// stretch, each fitted to its run's measured step times its speedFactor
// (calibrate's speed references; 1 without). No runs: c as it is.
Status applySharedCores(layout::Calibration& c, const std::vector<CalibratedRun>& runs,
                        const std::string& trace) {
  if (runs.empty()) return Status::ok();
  std::vector<layout::Calibration> shared;
  const CalibratedRun* tpRun = nullptr;
  const CalibratedRun* dpRun = nullptr;
  const CalibratedRun* ppRun = nullptr;
  for (const CalibratedRun& r : runs) {
    shared.push_back(r.part);
    if (r.layout.tp > 1) tpRun = &r;
    if (r.layout.pp > 1) ppRun = &r;
    if (dpRun == nullptr && r.layout.tp == 1 && r.layout.pp == 1 &&
        r.layout.zeroStage == layout::ZeroStage::kNone) {
      dpRun = &r;
    }
  }
  c = layout::withSharedCores(std::move(c), layout::mergeCalibrations(shared));
  // The wait at the step-end all-reduce (step_end_wait_fit.h), before the
  // tp share: the tp run's step-end all-reduce pays it too; a pipeline's
  // own from the dp C x pp 2 run (without it pipelines take dp's).
  if (dpRun != nullptr) BS_RETURN_IF_ERROR(applyStepEndWait(c, *dpRun, trace));
  if (ppRun != nullptr) BS_RETURN_IF_ERROR(applyStepEndWait(c, *ppRun, trace));
  if (tpRun == nullptr) return Status::ok();
  // The share of the time-sharing stretch the tp group's compute paid in
  // its run (tp_stretch_fit.h). Without it the calibration still holds: the
  // prediction then pays all.
  const layout::Layout& l = tpRun->layout;
  BS_ASSIGN_OR_RETURN(const double stepNs, scaledStepNs(*tpRun, trace));
  const Result<layout::TpStretchFit> fitted = layout::fitTpStretchPaid(l, c, stepNs);
  if (!fitted.isOk()) {
    std::fprintf(stderr, "calibrate: warning: %s; tp groups on shared cores pay all of it\n",
                 fitted.status().message().c_str());
    return Status::ok();
  }
  const layout::TpStretchFit& fit = *fitted;
  c = layout::withTpStretchPaid(std::move(c), fit.paid);
  std::fprintf(stderr,
               "calibrate: %s on %d cores measured %.1f ms a step: its compute pays %.0f%% of "
               "the time-sharing stretch (predicted %.1f ms paying none, %.1f ms paying all)\n",
               runName(l).c_str(), c.cores, stepNs / 1e6, 100 * fit.paid,
               fit.predictedAtZeroNs / 1e6, fit.predictedAtOneNs / 1e6);
  return Status::ok();
}

// A speed reference after every this many runs (and the drift check last).
constexpr size_t kRunsPerSpeedReference = 4;

}  // namespace

Result<layout::Calibration> benchmarkCalibration(const layout::ModelConfig& model, int32_t world,
                                                 const std::string& trace, int32_t steps,
                                                 const BenchmarkHosts& where) {
  std::vector<std::string> runFlags;
  if (!where.netIf.empty()) {
    std::string interfaces;
    for (const std::string& i : where.netIf) interfaces += (interfaces.empty() ? "" : ",") + i;
    runFlags = {"--net-if", interfaces};
  }
  const std::vector<BenchmarkRun> runs = benchmarkRuns(model, world, steps, where);
  if (runs.empty()) return Status::invalidArgument("calibrate: no benchmark run for this model");
  // The speed reference, run again between the others: the first layout of
  // more than one rank (both cores at work, as in the layouts predicted
  // from it; a single rank's speed did not follow theirs), else the first.
  size_t refIndex = 0;
  while (refIndex < runs.size() && runs[refIndex].layout.worldSize() < 2) ++refIndex;
  if (refIndex == runs.size()) refIndex = 0;
  const BenchmarkRun& ref = runs[refIndex];
  const std::string refName =
      runName(ref.layout) + " b" + std::to_string(ref.layout.microBatchSize) + ref.where;
  SpeedTrack speed;
  auto reference = [&](double position, const std::string& label) -> Status {
    const std::string name = label + " " + refName;
    std::fprintf(stderr, "calibrate: running %s ...\n", name.c_str());
    BS_ASSIGN_OR_RETURN(const int64_t id, runLayout(ref.layout, trace, false, name, runFlags));
    BS_ASSIGN_OR_RETURN(const LayoutTrial t,
                        measuredTrial(ref.layout, layout::Prediction{}, trace, id));
    speed.add(position, t.measuredStepNs);
    return Status::ok();
  };
  std::vector<CalibratedRun> done;
  for (size_t k = 0; k < runs.size(); ++k) {
    const BenchmarkRun& r = runs[k];
    const std::string name = "calibrate " + runName(r.layout) + " b" +
                             std::to_string(r.layout.microBatchSize) + r.where;
    // ZeRO 2's and 3's runs are the only ones that measure their
    // per-micro-batch collectives, from one run's 28 calls, and the tp run
    // the only one of tp's per-layer all-reduces: kFittedRuns runs, each fit
    // the median (from one run each, two calibrations a minute apart had
    // ZeRO 2's per-micro-batch reduce-scatter at 0.262 and 0.321 ns a byte
    // and tp's all-reduce at 0.312 and 0.590, and dp2 ZeRO-2 m8 and tp2 m8
    // predicted 8.7 % and 5.8 % apart).
    const bool repeated = r.layout.zeroStage == layout::ZeroStage::kGradients ||
                          r.layout.zeroStage == layout::ZeroStage::kParameters ||
                          r.layout.tp > 1;
    BS_ASSIGN_OR_RETURN(CalibratedRun c,
                        medianCalibratedRun(r.layout, name, trace, runFlags,
                                            repeated && k != refIndex ? kFittedRuns : 1));
    c.position = static_cast<double>(k);
    if (k == refIndex) {
      BS_ASSIGN_OR_RETURN(const LayoutTrial t,
                          measuredTrial(r.layout, layout::Prediction{}, trace, c.runId));
      speed.add(static_cast<double>(k), t.measuredStepNs);
    }
    done.push_back(std::move(c));
    if (k > refIndex && (k - refIndex) % kRunsPerSpeedReference == 0 && k + 1 < runs.size()) {
      BS_RETURN_IF_ERROR(reference(k + 0.5, "speed reference"));
    }
  }
  // Ranks that time-share the cores: measured apart and added as such, so
  // the calibration itself stays one of ranks with a core each; then the
  // reference once more (planning/machine_drift.h).
  int32_t cores = 0;
  for (const CalibratedRun& r : done) cores = std::max(cores, r.part.cores);
  BS_ASSIGN_OR_RETURN(std::vector<CalibratedRun> shared,
                      sharedCoresCalibratedRuns(model, world, trace, steps, cores, where));
  for (size_t j = 0; j < shared.size(); ++j) shared[j].position = runs.size() + j;
  BS_RETURN_IF_ERROR(reference(runs.size() + shared.size() - 0.5, "drift check"));
  // Every run's costs at the references' median speed.
  std::vector<layout::Calibration> parts;
  double low = 1, high = 1;
  for (CalibratedRun& r : done) {
    const double f = speed.factor(r.position);
    low = std::min(low, f);
    high = std::max(high, f);
    parts.push_back(layout::withTimesScaled(std::move(r.part), f));
  }
  for (CalibratedRun& r : shared) {
    r.speedFactor = speed.factor(r.position);
    r.part = layout::withTimesScaled(std::move(r.part), r.speedFactor);
  }
  layout::Calibration c = layout::mergeCalibrations(parts);
  BS_RETURN_IF_ERROR(applySharedCores(c, shared, trace));
  std::string refs;
  for (const auto& [position, ns] : speed.references()) {
    char text[32];
    std::snprintf(text, sizeof text, "%s%.1f", refs.empty() ? "" : ", ", ns / 1e6);
    refs += text;
  }
  std::fprintf(stderr,
               "calibrate: speed references (%s): %s ms a step; each run's costs scaled to their "
               "median, %.1f ms (by %.3f to %.3f)\n",
               refName.c_str(), refs.c_str(), speed.median() / 1e6, low, high);
  const double before = speed.references().front().second;
  const double after = speed.references().back().second;
  if (before > 0 && after > 0) {
    const double drift = after / before - 1;
    c = layout::withMachineDrift(std::move(c), drift);
    std::fprintf(stderr,
                 "calibrate: drift check: %s measured %.1f ms a step first, %.1f ms after the "
                 "other runs (%+.1f%%)%s\n",
                 runName(ref.layout).c_str(), before / 1e6, after / 1e6, 100 * drift,
                 std::fabs(drift) > layout::kMachineDriftWarning
                     ? ": the machine's speed moved while calibrating; predictions from this "
                       "calibration say so"
                     : "");
  }
  c.name = "benchmark of " + model.preset + " on " + std::to_string(world) + " ranks";
  if (!where.hosts.empty()) {
    c.name += " over " + std::to_string(where.hosts.size()) + " host" +
              (where.hosts.size() > 1 ? "s" : "");
  }
  c.method = "benchmark";
  c.sourceRun = 0;
  // The compressors' costs are this machine's: measured here when the runs were.
  if (where.hosts.empty()) BS_RETURN_IF_ERROR(addCodecCosts(c, /*progress=*/true));
  return c;
}

Status addSharedCores(layout::Calibration& c, const layout::ModelConfig& model, int32_t world,
                      const std::string& trace, int32_t steps, const BenchmarkHosts& where) {
  BS_ASSIGN_OR_RETURN(const std::vector<CalibratedRun> runs,
                      sharedCoresCalibratedRuns(model, world, trace, steps, c.cores, where));
  return applySharedCores(c, runs, trace);
}

layout::Calibration sharedCoresPart(layout::Calibration part) {
  auto has = [&](const char* dim) {
    return std::any_of(part.links.begin(), part.links.end(),
                       [&](const layout::LinkFit& f) { return f.dim == dim; });
  };
  const char* own = has("tp") ? "tp" : has("pp") ? "pp" : nullptr;
  if (own != nullptr) {  // its own dimension's fits only: the dp runs measure the rest
    std::erase_if(part.links, [&](const layout::LinkFit& f) { return f.dim != own; });
    std::erase_if(part.ops, [](const layout::OpCostEntry& e) {
      return e.part == "step" && e.op == "straggler";
    });
  }
  return part;
}

bool isSharedCoresRun(const std::string& runName) {
  const std::string suffix = kSharedCoresSuffix;
  return runName.size() >= suffix.size() &&
         runName.compare(runName.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// ZeRO 2's bucket work per micro-batch came out 1.03 and 1.28 ns a
// parameter in two calibrations a minute apart, from one run each.
layout::Calibration withMedianFits(layout::Calibration kept,
                                   const std::vector<layout::Calibration>& runs) {
  for (layout::OpCostEntry& e : kept.ops) {
    std::vector<double> wall, cpu;
    for (const layout::Calibration& r : runs) {
      for (const layout::OpCostEntry& o : r.ops) {
        if (!o.sameKey(e)) continue;
        wall.push_back(o.wallNs);
        cpu.push_back(o.cpuNs);
        break;
      }
    }
    if (wall.size() != runs.size()) continue;
    e.wallNs = median(wall);
    e.cpuNs = median(cpu);
  }
  for (layout::LinkFit& f : kept.links) {
    std::vector<double> alpha, beta;
    for (const layout::Calibration& r : runs) {
      const auto o = std::find_if(r.links.begin(), r.links.end(),
                                  [&](const layout::LinkFit& x) { return x.sameKey(f); });
      if (o == r.links.end()) break;
      alpha.push_back(o->alphaNs);
      beta.push_back(o->betaNsPerByte);
    }
    if (alpha.size() != runs.size()) continue;
    f.alphaNs = median(alpha);
    f.betaNsPerByte = median(beta);
  }
  return kept;
}

}  // namespace bubblescope::cli
