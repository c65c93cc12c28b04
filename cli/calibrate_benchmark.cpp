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
#include "planning/core_sharing.h"
#include "planning/machine_drift.h"
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
// waiting for peers and beta cannot be told apart), m = 2 at b = 1 (the
// size the layers are measured at first). Only without hosts and with at
// most kMaxSharedCores cores (2C ranks is one short run, not a crowd).
constexpr int32_t kMaxSharedCores = 8;
constexpr const char* kSharedCoresSuffix = " shared cores";  // ends their run names

std::vector<layout::Layout> sharedCoresRuns(const layout::ModelConfig& model, int32_t world,
                                            int32_t steps, int32_t cores,
                                            const BenchmarkHosts& h) {
  if (world < 2 || !h.hosts.empty() || cores < 1 || cores > kMaxSharedCores) return {};
  std::vector<layout::Layout> out;
  for (auto zero : {layout::ZeroStage::kNone, layout::ZeroStage::kOptimizer}) {
    layout::Layout l;
    l.model = model;
    l.steps = steps;
    l.microBatches = 2;
    l.dp = 2 * cores;
    l.zeroStage = zero;
    out.push_back(l);
  }
  // tp 2 x dp C: tp's per-layer all-reduces between ranks that time-share
  // the cores (only its tp fits are kept: addSharedCores).
  if (model.numHeads % 2 == 0 && !model.hasMoe()) {
    layout::Layout l;
    l.model = model;
    l.steps = steps;
    l.microBatches = 2;
    l.tp = 2;
    l.dp = cores;
    out.push_back(l);
  }
  return out;
}

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
  std::vector<layout::Calibration> parts;
  const std::vector<BenchmarkRun> runs = benchmarkRuns(model, world, steps, where);
  int64_t firstRun = -1;
  for (const BenchmarkRun& r : runs) {
    const layout::Layout& l = r.layout;
    BS_RETURN_IF_ERROR(validate(l));
    const std::string name =
        "calibrate " + runName(l) + " b" + std::to_string(l.microBatchSize) + r.where;
    std::fprintf(stderr, "calibrate: running %s ...\n", name.substr(10).c_str());
    BS_ASSIGN_OR_RETURN(const int64_t runId, runLayout(l, trace, false, name, runFlags));
    if (firstRun < 0) firstRun = runId;
    BS_ASSIGN_OR_RETURN(auto reader, storage::TraceReader::open(trace));
    BS_ASSIGN_OR_RETURN(layout::Calibration c, analysis::calibrateFromRun(*reader, runId));
    parts.push_back(std::move(c));
  }
  layout::Calibration c = layout::mergeCalibrations(parts);
  // Ranks that time-share the cores: measured apart and added as such, so
  // the calibration itself stays one of ranks with a core each.
  BS_RETURN_IF_ERROR(addSharedCores(c, model, world, trace, steps, where));
  // The machine's own drift meanwhile: the first layout again
  // (layout/machine_drift.h). Named apart: it calibrates nothing.
  if (!runs.empty()) {
    const BenchmarkRun& first = runs.front();
    const layout::Layout& l = first.layout;
    const std::string name = "drift check " + runName(l) + " b" +
                             std::to_string(l.microBatchSize) + first.where;
    std::fprintf(stderr, "calibrate: running %s ...\n", name.c_str());
    BS_ASSIGN_OR_RETURN(const int64_t again, runLayout(l, trace, false, name, runFlags));
    BS_ASSIGN_OR_RETURN(const LayoutTrial before,
                        measuredTrial(l, layout::Prediction{}, trace, firstRun));
    BS_ASSIGN_OR_RETURN(const LayoutTrial after, measuredTrial(l, layout::Prediction{}, trace, again));
    if (before.measuredStepNs > 0 && after.measuredStepNs > 0) {
      const double drift = after.measuredStepNs / before.measuredStepNs - 1;
      c = layout::withMachineDrift(std::move(c), drift);
      std::fprintf(stderr,
                   "calibrate: drift check: %s measured %.1f ms a step first, %.1f ms after the "
                   "other runs (%+.1f%%)%s\n",
                   runName(l).c_str(), before.measuredStepNs / 1e6, after.measuredStepNs / 1e6,
                   100 * drift,
                   std::fabs(drift) > layout::kMachineDriftWarning
                       ? ": the machine's speed moved while calibrating; predictions from this "
                         "calibration say so"
                       : "");
    }
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
  std::vector<std::string> runFlags;  // no hosts: no --net-if either
  std::vector<layout::Calibration> shared;
  std::optional<std::pair<layout::Layout, int64_t>> tpRun;
  for (const layout::Layout& l : sharedCoresRuns(model, world, steps, c.cores, where)) {
    BS_RETURN_IF_ERROR(validate(l));
    const std::string name = "calibrate " + runName(l) + " b1" + kSharedCoresSuffix;
    std::fprintf(stderr, "calibrate: running %s ...\n", name.substr(10).c_str());
    BS_ASSIGN_OR_RETURN(const int64_t runId, runLayout(l, trace, false, name, runFlags));
    BS_ASSIGN_OR_RETURN(auto reader, storage::TraceReader::open(trace));
    BS_ASSIGN_OR_RETURN(layout::Calibration part, analysis::calibrateFromRun(*reader, runId));
    shared.push_back(sharedCoresPart(std::move(part)));
    if (l.tp > 1) tpRun = {l, runId};
  }
  if (shared.empty()) return Status::ok();
  c = layout::withSharedCores(std::move(c), layout::mergeCalibrations(shared));
  if (!tpRun) return Status::ok();
  // The share of the time-sharing stretch the tp group's compute paid in
  // its run (tp_stretch_fit.h).
  // Without it the calibration still holds: the prediction then pays all.
  const auto& [l, runId] = *tpRun;
  BS_ASSIGN_OR_RETURN(const LayoutTrial t, measuredTrial(l, layout::Prediction{}, trace, runId));
  const Result<layout::TpStretchFit> fitted = layout::fitTpStretchPaid(l, c, t.measuredStepNs);
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
               runName(l).c_str(), c.cores, t.measuredStepNs / 1e6, 100 * fit.paid,
               fit.predictedAtZeroNs / 1e6, fit.predictedAtOneNs / 1e6);
  return Status::ok();
}

layout::Calibration sharedCoresPart(layout::Calibration part) {
  const bool tp = std::any_of(part.links.begin(), part.links.end(),
                              [](const layout::LinkFit& f) { return f.dim == "tp"; });
  if (tp) {  // its tp fits only: the dp runs measure the rest
    std::erase_if(part.links, [](const layout::LinkFit& f) { return f.dim != "tp"; });
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

}  // namespace bubblescope::cli
