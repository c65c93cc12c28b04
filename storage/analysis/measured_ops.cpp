#include "storage/analysis/measured_ops.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "common/median.h"
#include "storage/analysis/typical_steps.h"
#include "storage/analysis/run_layout.h"

namespace bubblescope::analysis {
namespace {

using trace_model::Event;
using trace_model::EventKind;
using trace_model::ParallelDim;

std::string partOf(const std::string& spanName) {
  if (spanName == "embedding" || spanName == "head") return spanName;
  if (spanName.rfind("h.", 0) == 0) return "block";
  return "";
}

// The executor's op spans; the optimizer op is its "grad_norm" span (the
// local sums of squares) and its "optimizer" span (clipping and the update),
// summed under the op "optimizer".
bool isOpSpan(const std::string& name) {
  return name == "forward" || name == "backward" || name == "backward_input" ||
         name == "backward_weight" || name == "recompute" || name == "optimizer" ||
         name == "grad_norm";
}

std::string dimName(ParallelDim d) {
  switch (d) {
    case ParallelDim::kDp:
      return "dp";
    case ParallelDim::kTp:
      return "tp";
    case ParallelDim::kPp:
      return "pp";
    case ParallelDim::kZero:
      return "zero";
    case ParallelDim::kEp:
      return "ep";
    default:
      return "";
  }
}

std::string collectiveName(EventKind k) {
  switch (k) {
    case EventKind::kAllReduce:
      return "allreduce";
    case EventKind::kReduceScatter:
      return "reduce_scatter";
    case EventKind::kAllGather:
      return "all_gather";
    case EventKind::kRecv:
      return "p2p";
    case EventKind::kAllToAll:
      return "all_to_all";
    default:
      return "";
  }
}

MeasuredCost costOf(const Event& e) {
  const double wall = static_cast<double>(e.endNs - e.startNs);
  return {wall, e.cpuNs >= 0 ? static_cast<double>(e.cpuNs) : wall};
}

void add(MeasuredCost& into, const MeasuredCost& c) {
  into.wallNs += c.wallNs;
  into.cpuNs += c.cpuNs;
}

// The union of a rank's spans per step, from spans visited in start order.
class StepCoverage {
 public:
  void add(int32_t step, int64_t startNs, int64_t endNs) {
    Open& o = open_[step];
    if (o.endNs <= o.startNs || startNs > o.endNs) {
      o.coveredNs += static_cast<double>(o.endNs - o.startNs);
      o.startNs = startNs;
      o.endNs = endNs;
    } else {
      o.endNs = std::max(o.endNs, endNs);
    }
  }
  double coveredNs(int32_t step) const {
    auto it = open_.find(step);
    if (it == open_.end()) return 0.0;
    return it->second.coveredNs + static_cast<double>(it->second.endNs - it->second.startNs);
  }

 private:
  struct Open {
    int64_t startNs = 0, endNs = 0;  // the interval being extended
    double coveredNs = 0;            // closed intervals before it
  };
  std::map<int32_t, Open> open_;
};

// Per step, the spans that are not op-level wrappers, tagged with their
// micro-batch: MeasuredOps::microBatchGapNs.
class MicroBatchGaps {
 public:
  void add(const Event& e) {
    if (e.lane == trace_model::Lane::kCompute && isOpSpan(e.name)) return;
    spans_[e.step].push_back({e.startNs, e.endNs, e.microBatch});
  }
  void into(int32_t rank, std::map<std::tuple<int32_t, int32_t, int32_t>, double>& out) const {
    for (const auto& [step, spans] : spans_) {
      std::map<int32_t, int64_t> firstStart;  // micro-batch -> its window's start
      for (const Span& s : spans) {
        if (s.microBatch < 0) continue;
        auto [it, added] = firstStart.try_emplace(s.microBatch, s.startNs);
        if (!added) it->second = std::min(it->second, s.startNs);
      }
      for (const auto& [mb, start] : firstStart) {
        auto next = firstStart.find(mb + 1);
        if (next == firstStart.end() || next->second <= start) continue;
        out[{rank, step, mb}] = uncovered(spans, start, next->second);
      }
    }
  }

 private:
  struct Span {
    int64_t startNs = 0, endNs = 0;
    int32_t microBatch = -1;
  };
  // [lo, hi) less the union of the spans clipped to it.
  static double uncovered(const std::vector<Span>& spans, int64_t lo, int64_t hi) {
    std::vector<std::pair<int64_t, int64_t>> in;
    for (const Span& s : spans) {
      if (s.endNs > lo && s.startNs < hi) in.emplace_back(std::max(s.startNs, lo), std::min(s.endNs, hi));
    }
    std::sort(in.begin(), in.end());
    int64_t covered = 0, openLo = lo, openHi = lo;
    for (const auto& [a, b] : in) {
      if (a > openHi) {
        covered += openHi - openLo;
        openLo = a;
        openHi = b;
      } else {
        openHi = std::max(openHi, b);
      }
    }
    covered += openHi - openLo;
    return static_cast<double>(hi - lo - covered);
  }
  std::map<int32_t, std::vector<Span>> spans_;
};

}  // namespace

std::string opNameOf(EventKind kind) {
  switch (kind) {
    case EventKind::kForward:
      return "forward";
    case EventKind::kBackward:
      return "backward";
    case EventKind::kBackwardInput:
      return "backward_input";
    case EventKind::kBackwardWeight:
      return "backward_weight";
    case EventKind::kRecompute:
      return "recompute";
    case EventKind::kOptimizer:
      return "optimizer";
    default:
      return "";
  }
}

std::optional<MeasuredCost> MeasuredOps::op(int32_t rank, int32_t step, int32_t microBatch,
                                            int32_t chunk, const std::string& name) const {
  auto it = ops.find({rank, step, microBatch, chunk, name});
  if (it == ops.end()) return std::nullopt;
  return it->second;
}

Result<MeasuredOps> measureOps(storage::TraceReader& reader, int64_t runId) {
  MeasuredOps out;
  BS_ASSIGN_OR_RETURN(const storage::RunRecord run, reader.run(runId));
  out.layout = runLayout(run.info.layoutJson, run.info.modelJson);
  BS_ASSIGN_OR_RETURN(out.ranks, reader.ranks(runId));
  BS_ASSIGN_OR_RETURN(const std::vector<trace_model::StepRecord> stepRecords, reader.steps(runId));
  PipelineHops hops(out.layout ? out.layout->pp : 1);
  for (const storage::RankInfo& r : out.ranks) {
    StepCoverage coverage;
    MicroBatchGaps gaps;
    // Op spans, and layer spans summed per op key and layer name.
    std::map<OpKey, MeasuredCost> opSpans, layerSums;
    std::map<std::pair<OpKey, std::string>, MeasuredCost> layerByName;
    BS_RETURN_IF_ERROR(reader.visitEvents(runId, r.rank, [&](const Event& e) {
      if (e.step < 0) return Status::ok();
      out.steps = std::max(out.steps, e.step + 1);
      coverage.add(e.step, e.startNs, e.endNs);
      gaps.add(e);
      hops.add(e);
      const std::string op = opNameOf(e.kind);
      if (!op.empty() && e.lane == trace_model::Lane::kCompute) {
        if (e.cpuNs >= 0) out.cpuMeasured = true;
        const int32_t mb = op == "optimizer" ? -1 : e.microBatch;
        const int32_t chunk = op == "optimizer" ? -1 : std::max(0, e.chunk);
        const OpKey key{r.rank, e.step, mb, chunk, op};
        if (isOpSpan(e.name)) {
          add(opSpans[key], costOf(e));
        } else if (!partOf(e.name).empty()) {
          add(layerSums[key], costOf(e));
          add(layerByName[{key, e.name}], costOf(e));
        }
        return Status::ok();
      }
      const std::string dim = dimName(e.dim), coll = collectiveName(e.kind);
      if (!dim.empty() && !coll.empty() && e.bytes > 0) {
        out.comms.push_back({r.rank, e.step, e.microBatch, dim, coll, e.bytes,
                             static_cast<double>(e.endNs - e.startNs)});
      }
      return Status::ok();
    }));
    for (const trace_model::StepRecord& s : stepRecords) {
      if (s.rank != r.rank) continue;
      out.rankSteps[{r.rank, s.step}] = {static_cast<double>(s.endNs - s.startNs),
                                         coverage.coveredNs(s.step)};
    }
    gaps.into(r.rank, out.microBatchGapNs);
    for (const auto& [key, cost] : layerSums) out.ops[key] = cost;
    for (const auto& [key, cost] : opSpans) out.ops[key] = cost;  // the op span wins
    out.opSpans.insert(opSpans.begin(), opSpans.end());
    out.layerTotals.insert(layerSums.begin(), layerSums.end());
    for (const auto& [k, cost] : layerByName) {
      out.layers.push_back(
          {r.rank, std::get<1>(k.first), partOf(k.second), std::get<4>(k.first), cost});
    }
  }
  out.hops = hops.hops();
  return out;
}

std::set<int32_t> typicalSteps(const MeasuredOps& m, int32_t firstStep) {
  std::map<int32_t, double> slowest;  // step -> its slowest rank's record (0: none)
  for (int32_t s = firstStep; s < m.steps; ++s) slowest[s] = 0.0;
  for (const auto& [key, t] : m.rankSteps) {
    if (key.second >= firstStep && t.stepNs > 0) {
      slowest[key.second] = std::max(slowest[key.second], t.stepNs);
    }
  }
  return typicalSteps(slowest);
}

MeasuredOps onlySteps(MeasuredOps m, const std::set<int32_t>& steps) {
  auto kept = [&](int32_t step) { return steps.count(step) > 0; };
  std::erase_if(m.layers, [&](const LayerSample& s) { return !kept(s.step); });
  std::erase_if(m.comms, [&](const CommSample& s) { return !kept(s.step); });
  std::erase_if(m.hops, [&](const HopSample& s) { return !kept(s.step); });
  for (auto* byKey : {&m.ops, &m.opSpans, &m.layerTotals}) {
    std::erase_if(*byKey, [&](const auto& entry) { return !kept(std::get<1>(entry.first)); });
  }
  std::erase_if(m.rankSteps, [&](const auto& entry) { return !kept(entry.first.second); });
  std::erase_if(m.microBatchGapNs,
                [&](const auto& entry) { return !kept(std::get<1>(entry.first)); });
  return m;
}

}  // namespace bubblescope::analysis
