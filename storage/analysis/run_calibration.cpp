#include "storage/analysis/run_calibration.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "planning/contention.h"
#include "planning/formulas.h"
#include "planning/link_class.h"

namespace bubblescope::analysis {
namespace {

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * (v.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}

double meanOf(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
}

// Per parameter the rank holds: the mean time of its steps outside every
// span (RankStepTime::uncoveredNs). Only single-stage runs: a pipeline
// stage's uncovered time is mostly its bubble.
std::optional<layout::OpCostEntry> uncoveredCost(const MeasuredOps& m, int32_t firstStep) {
  const layout::Layout& l = *m.layout;
  if (l.pp != 1) return std::nullopt;
  std::vector<double> perParameter;
  for (const auto& [key, t] : m.rankSteps) {
    if (key.second < firstStep || t.stepNs <= 0) continue;
    double params = layout::parametersPerRank(l);
    for (const storage::RankInfo& r : m.ranks) {
      if (r.rank == key.first && r.parameters > 0) params = static_cast<double>(r.parameters);
    }
    if (params > 0) perParameter.push_back(t.uncoveredNs() / params);
  }
  if (perParameter.empty()) return std::nullopt;
  layout::OpCostEntry e;
  e.part = "step";
  e.op = "other";
  e.microBatchSize = 0;
  e.wallNs = e.cpuNs = meanOf(perParameter);  // no thread CPU time outside spans
  e.samples = static_cast<int64_t>(perParameter.size());
  return e;
}

// The straggler factor (layout::Calibration::stragglerFactor): over the
// steps, the mean of the slowest rank's compute over the mean of the ranks'
// mean compute, among ranks doing the same work (one pipeline stage).
// nullopt when no stage has two ranks.
std::optional<layout::OpCostEntry> stragglerCost(const MeasuredOps& m, int32_t firstStep) {
  // (step, stage) -> rank -> compute (wall, cpu)
  std::map<std::pair<int32_t, int32_t>, std::map<int32_t, MeasuredCost>> compute;
  std::map<int32_t, int32_t> stageOf;
  for (const storage::RankInfo& r : m.ranks) stageOf[r.rank] = r.pp;
  for (const auto& [key, cost] : m.ops) {
    const int32_t rank = std::get<0>(key), step = std::get<1>(key);
    if (step < firstStep) continue;
    MeasuredCost& sum = compute[{step, stageOf[rank]}][rank];
    sum.wallNs += cost.wallNs;
    sum.cpuNs += cost.cpuNs;
  }
  double maxWall = 0, maxCpu = 0, meanWall = 0, meanCpu = 0;
  int64_t groups = 0;
  for (const auto& [key, byRank] : compute) {
    if (byRank.size() < 2) continue;
    double mw = 0, mc = 0, sw = 0, sc = 0;
    for (const auto& [rank, c] : byRank) {
      mw = std::max(mw, c.wallNs);
      mc = std::max(mc, c.cpuNs);
      sw += c.wallNs;
      sc += c.cpuNs;
    }
    maxWall += mw;
    maxCpu += mc;
    meanWall += sw / static_cast<double>(byRank.size());
    meanCpu += sc / static_cast<double>(byRank.size());
    ++groups;
  }
  if (groups == 0 || meanWall <= 0 || meanCpu <= 0) return std::nullopt;
  layout::OpCostEntry e;
  e.part = "step";
  e.op = "straggler";
  e.microBatchSize = 0;
  e.wallNs = maxWall / meanWall;
  e.cpuNs = maxCpu / meanCpu;
  e.samples = groups;
  return e;
}

// How much the run's compute was stretched (planning/contention.h): the
// wall time of its compute op spans (the executor's forward, backward, ...,
// optimizer: what runs between the layers included) over their thread CPU
// time, summed over ranks and steps; a ratio in both cost columns. Under
// load a rank is often taken off its core between two layers (a clock read
// at a span's end is where the scheduler notices its slice is over), so the
// layers' own spans miss part of the stretch: on `small` beside four busy
// loops, 2.6x in the layers against 3.1x over the ops. nullopt without CPU
// times.
std::optional<layout::OpCostEntry> opStretchCost(const MeasuredOps& m, int32_t firstStep) {
  if (!m.cpuMeasured) return std::nullopt;
  double wall = 0, cpu = 0;
  int64_t samples = 0;
  for (const auto& [key, cost] : m.ops) {
    if (std::get<1>(key) < firstStep || cost.cpuNs <= 0) continue;
    wall += cost.wallNs;
    cpu += cost.cpuNs;
    ++samples;
  }
  if (cpu <= 0 || wall <= 0) return std::nullopt;
  return layout::OpCostEntry{layout::kContentionPart, layout::kOpStretchOp, 0, 1, wall / cpu,
                             wall / cpu, samples};
}

// ZeRO 2/3's gradient buckets (layout::kZeroBucketPart), per gradient
// element of the stage and micro-batch, from the ranks' time outside their
// spans in each micro-batch window (MeasuredOps::microBatchGapNs): the
// ranks' mean (op kZeroBucketOp: work) and the slowest rank's excess over
// that mean (op kZeroBucketSkewOp: each micro-batch ends in a reduce-scatter
// that every rank joins, so the others wait that long in it, on average
// over the ranks), each the mean over windows and steps. Only single-stage
// runs whose gradients are sharded over two ranks or more.
// The work's thread CPU time (its cpu column; the skew keeps its wall time
// in both): where op spans wrap the window's passes (ZeRO 2), the op spans'
// CPU time less their layers' plus the rest of the window's gap over the
// run's op stretch; else the wall time (no CPU time outside spans). Under
// load a rank is taken off its core between two layers far more often than
// inside one: beside four busy loops the 2-core VM's ZeRO-2 windows left
// 49 ms a micro-batch uncovered against 6.0 quiet, 8x, while its op spans
// stretched 2.95x; priced from the wall time, the background model
// predicted that very layout 20 % slow.
std::vector<layout::OpCostEntry> zeroBucketCosts(const MeasuredOps& m, int32_t firstStep,
                                                 double opStretch) {
  const layout::Layout& l = *m.layout;
  if (l.pp != 1 || l.dp < 2 || !layout::shardsGradients(l.zeroStage)) return {};
  // (rank, step, mb) -> the op spans' wall and CPU time less their layers'.
  std::map<std::tuple<int32_t, int32_t, int32_t>, MeasuredCost> between;
  for (const auto& [key, op] : m.opSpans) {
    const auto& [rank, step, mb, chunk, name] = key;
    if (mb < 0) continue;
    const auto layers = m.layerTotals.find(key);
    const MeasuredCost inside = layers == m.layerTotals.end() ? MeasuredCost{} : layers->second;
    MeasuredCost& b = between[{rank, step, mb}];
    b.wallNs += std::max(0.0, op.wallNs - inside.wallNs);
    b.cpuNs += std::max(0.0, op.cpuNs - inside.cpuNs);
  }
  struct Window {
    std::vector<double> wall, cpu;  // per rank
  };
  std::map<std::pair<int32_t, int32_t>, Window> windows;  // (step, mb)
  for (const auto& [key, ns] : m.microBatchGapNs) {
    const auto [rank, step, mb] = key;
    if (step < firstStep) continue;
    Window& w = windows[{step, mb}];
    w.wall.push_back(ns);
    const auto b = between.find(key);
    w.cpu.push_back(m.cpuMeasured && b != between.end()
                        ? b->second.cpuNs + std::max(0.0, ns - b->second.wallNs) / opStretch
                        : ns);
  }
  const double elements = layout::parametersPerRank(l);
  if (windows.empty() || elements <= 0) return {};
  std::vector<double> work, workCpu, skew;
  for (const auto& [key, w] : windows) {
    const double mean = meanOf(w.wall);
    work.push_back(mean / elements);
    workCpu.push_back(meanOf(w.cpu) / elements);
    skew.push_back((*std::max_element(w.wall.begin(), w.wall.end()) - mean) / elements);
  }
  std::vector<layout::OpCostEntry> out;
  for (auto [op, values, cpu] : {std::tuple{layout::kZeroBucketOp, &work, &workCpu},
                                 std::tuple{layout::kZeroBucketSkewOp, &skew, &skew}}) {
    layout::OpCostEntry e;
    e.part = layout::kZeroBucketPart;
    e.op = op;
    e.microBatchSize = 0;
    e.wallNs = meanOf(*values);
    e.cpuNs = meanOf(*cpu);
    e.samples = static_cast<int64_t>(values->size());
    out.push_back(e);
  }
  return out;
}

int32_t groupSizeOf(const layout::Layout& l, const std::string& dim) {
  if (dim == "tp") return l.tp;
  if (dim == "pp") return l.pp;
  if (dim == "ep") return l.ep;
  return l.dp;
}

}  // namespace

Result<layout::Calibration> calibrationOf(const MeasuredOps& measured, int64_t runId) {
  // The run's typical steps only: its costs are means, the steps they
  // predict are compared with medians (measured_ops.h, typicalSteps).
  const MeasuredOps m =
      onlySteps(measured, typicalSteps(measured, measured.steps > 1 ? 1 : 0));
  if (!m.layout) {
    return Status::invalidArgument("run " + std::to_string(runId) +
                                   " has no readable layout: cannot tell its layers apart");
  }
  const layout::Layout& l = *m.layout;
  const int32_t firstStep = m.steps > 1 ? 1 : 0;
  layout::Calibration c;
  c.name = "from run " + std::to_string(runId);
  c.sourceRun = runId;
  c.method = "run";
  c.model = l.model;
  c.backend = layout::backendName(l.backend);
  std::set<std::string> hosts;
  std::vector<std::string> hostOfRank(static_cast<size_t>(std::max<int64_t>(0, l.worldSize())));
  for (const storage::RankInfo& r : m.ranks) {
    hosts.insert(r.host);
    c.cores = std::max(c.cores, r.coresOnHost);
    c.ranksPerHost = std::max(c.ranksPerHost, r.ranksOnHost);
    if (r.rank >= 0 && r.rank < static_cast<int32_t>(hostOfRank.size())) {
      hostOfRank[r.rank] = r.host;
    }
  }
  c.host = hosts.empty() ? "" : *hosts.begin();

  std::map<std::pair<std::string, std::string>, std::vector<MeasuredCost>> parts;
  for (const LayerSample& s : m.layers) {
    if (s.step >= firstStep) parts[{s.part, s.op}].push_back(s.cost);
  }
  // The optimizer per parameter this rank updates.
  const bool sharded = l.zeroStage != layout::ZeroStage::kNone && l.dp > 1;
  for (const auto& [key, cost] : m.ops) {
    if (std::get<4>(key) != "optimizer" || std::get<1>(key) < firstStep) continue;
    const int32_t rank = std::get<0>(key);
    double params = layout::parametersPerRank(l);
    for (const storage::RankInfo& r : m.ranks) {
      if (r.rank == rank && r.parameters > 0) params = static_cast<double>(r.parameters);
    }
    if (sharded) params /= l.dp;
    if (params > 0)
      parts[{"optimizer", "step"}].push_back({cost.wallNs / params, cost.cpuNs / params});
  }
  if (parts.empty()) {
    return Status::invalidArgument("run " + std::to_string(runId) +
                                   " has no compute spans to calibrate from (was it traced?)");
  }
  for (const auto& [key, samples] : parts) {
    std::vector<double> wall, cpu;
    for (const MeasuredCost& s : samples) {
      wall.push_back(s.wallNs);
      cpu.push_back(s.cpuNs);
    }
    layout::OpCostEntry e;
    e.part = key.first;
    e.op = key.second;
    e.microBatchSize = e.part == "optimizer" ? 0 : l.microBatchSize;
    e.tp = e.part == "optimizer" ? 1 : l.tp;
    // The mean, not the median: a step is a sum of op times, and the sum's
    // expectation is the sum of the means. Under CPU contention op times are
    // skewed (most run at full speed, some wait for a core for a whole time
    // slice): the median then misses the waits the step pays.
    e.wallNs = meanOf(wall);
    e.cpuNs = meanOf(cpu);
    e.samples = static_cast<int64_t>(samples.size());
    c.ops.push_back(e);
  }
  if (auto e = uncoveredCost(m, firstStep)) c.ops.push_back(*e);
  if (auto e = stragglerCost(m, firstStep)) c.ops.push_back(*e);
  const auto stretch = opStretchCost(m, firstStep);
  if (stretch) c.ops.push_back(*stretch);
  for (const layout::OpCostEntry& e :
       zeroBucketCosts(m, firstStep, stretch && stretch->wallNs >= 1.0 ? stretch->wallNs : 1.0)) {
    c.ops.push_back(e);
  }

  // (dim, collective, link) -> bytes -> times; the link of each sample is
  // its rank's group's (layout/link_class.h): a run over hosts fits both.
  std::map<std::tuple<std::string, std::string, std::string>,
           std::map<int64_t, std::vector<double>>>
      comms;
  std::map<std::pair<int32_t, std::string>, std::string> linkOf;  // (rank, dim) -> link
  // Each size's time: the lower quartile of its wall times (a collective's
  // span includes the wait for the last peer; a once-a-step collective's
  // wait is the straggler factor's), a pipeline transfer's median receive;
  // but tp's all-reduces inside the layers (a micro-batch tag), which the
  // ranks meet at 4 times per layer and micro-batch, their mean: the step
  // pays each one's wait for the other rank (the skew of the layers'
  // halves) and its tail (a rank descheduled in it) every time, and no
  // other term holds them (docs/prediction.md, section 1); ZeRO-3's
  // per-layer all-gathers (layout::kMicroBatchAllGather) the same.
  std::set<std::pair<std::string, int64_t>> onceAStep;  // (dim, bytes) with a step-level sample
  for (const CommSample& s : m.comms) {
    if (s.step < firstStep) continue;
    auto [it, added] = linkOf.try_emplace({s.rank, s.dim});
    if (added) it->second = layout::linkClass(l, hostOfRank, s.rank, s.dim);
    // ZeRO 2/3 reduce-scatter every micro-batch: fitted apart from ZeRO 1's.
    // ZeRO-3's per-layer gathers (a micro-batch tag) apart from the
    // once-a-step ones, at their mean like tp's.
    const bool perLayerGather = s.collective == "all_gather" && sharded &&
                                l.zeroStage == layout::ZeroStage::kParameters &&
                                s.microBatch >= 0;
    const std::string collective = s.collective == "reduce_scatter" && sharded &&
                                           layout::shardsGradients(l.zeroStage)
                                       ? layout::kMicroBatchReduceScatter
                                   : perLayerGather ? layout::kMicroBatchAllGather
                                                    : s.collective;
    comms[{s.dim, collective, it->second}][s.bytes].push_back(s.wallNs);
    if (s.dim == "tp" && s.microBatch < 0) onceAStep.insert({s.dim, s.bytes});
  }
  for (const auto& [key, bySize] : comms) {
    const auto& [dim, collective, link] = key;
    std::vector<std::pair<double, double>> points;
    int64_t n = 0;
    for (const auto& [bytes, times] : bySize) {
      points.emplace_back(static_cast<double>(bytes),
                          (dim == "tp" && !onceAStep.count({dim, bytes})) ||
                                  collective == layout::kMicroBatchAllGather
                              ? meanOf(times)
                              : quantile(times, collective == "p2p" ? 0.5 : 0.25));
      n += static_cast<int64_t>(times.size());
    }
    layout::LinkFit f = layout::fitAlphaBeta(points);
    f.dim = dim;
    f.collective = collective;
    f.link = link;
    f.groupSize = groupSizeOf(l, dim);
    f.samples = n;
    c.links.push_back(f);
  }
  // A blocked pipeline receive's wake-up (layout::kReceiveWake), per link:
  // the mean over the receives that waited of their hop less the link's p2p
  // transfer of the send's bytes, at least 0. The mean: every hop on the
  // step's critical path is paid in full.
  std::map<std::string, std::vector<double>> wakes;  // link -> hop less transfer
  std::map<std::string, std::pair<int64_t, int64_t>> wakeBytes;  // link -> min, max
  for (const HopSample& h : m.hops) {
    if (h.step < firstStep) continue;
    auto [it, added] = linkOf.try_emplace({h.rank, "pp"});
    if (added) it->second = layout::linkClass(l, hostOfRank, h.rank, "pp");
    const std::string& link = it->second;
    const layout::LinkFit* transfer = c.linkFit("pp", "p2p", link);
    const bool own = transfer != nullptr && transfer->dim == "pp" && transfer->link == link;
    wakes[link].push_back(h.hopNs - (own ? transfer->timeNs(static_cast<double>(h.bytes)) : 0.0));
    auto& range = wakeBytes.try_emplace(link, h.bytes, h.bytes).first->second;
    range = {std::min(range.first, h.bytes), std::max(range.second, h.bytes)};
  }
  for (const auto& [link, values] : wakes) {
    layout::LinkFit f;
    f.dim = "pp";
    f.link = link;
    f.collective = layout::kReceiveWake;
    f.groupSize = l.pp;
    f.alphaNs = std::max(0.0, meanOf(values));
    f.samples = static_cast<int64_t>(values.size());
    std::tie(f.minBytes, f.maxBytes) = wakeBytes[link];
    c.links.push_back(f);
  }
  return c;
}

Result<layout::Calibration> calibrateFromRun(storage::TraceReader& reader, int64_t runId) {
  BS_ASSIGN_OR_RETURN(const storage::RunRecord run, reader.run(runId));
  if (run.info.simulated) {
    return Status::invalidArgument("run " + std::to_string(runId) +
                                   " is simulated: calibrate from a measured run");
  }
  BS_ASSIGN_OR_RETURN(const MeasuredOps m, measureOps(reader, runId));
  return calibrationOf(m, runId);
}

}  // namespace bubblescope::analysis
