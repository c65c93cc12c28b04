#include "storage/analysis/ideal_replay.h"

#include <algorithm>
#include <map>

#include "common/median.h"
#include "planning/simulator.h"
#include "storage/simulated_run.h"

namespace bubblescope::analysis {
namespace {

using layout::Op;
using layout::OpType;

class Replayer {
 public:
  explicit Replayer(const MeasuredOps& m) : m_(m), l_(*m.layout) {
    for (const storage::RankInfo& r : m.ranks) stageRanks_[r.pp].push_back(r.rank);
    std::vector<double> p2p;
    for (const CommSample& c : m.comms) {
      if (c.collective == "p2p") p2p.push_back(c.wallNs);
    }
    p2pNs_ = median(p2p);
    std::map<std::string, std::vector<double>> byOp;
    for (const auto& [key, cost] : m.ops) byOp[std::get<4>(key)].push_back(cost.cpuNs);
    for (auto& [name, v] : byOp) medianOf_[name] = median(v);
  }

  Result<IdealReplay> run() {
    BS_ASSIGN_OR_RETURN(const layout::Schedule schedule, layout::scheduleFor(l_));
    for (const auto& ops : schedule.stageOps) {
      for (const Op& op : ops)
        perMicroBatch_ |= op.type == OpType::kReduceScatterGrads && op.microBatch >= 0;
    }
    IdealReplay out;
    out.bubble.assign(schedule.stages, 0.0);
    const int32_t first = m_.steps > 1 ? 1 : 0;
    out.firstStep = first;
    out.p2pNs = p2pNs_;
    for (int32_t step = first; step < m_.steps; ++step) {
      layout::OpCosts costs(schedule.stages);
      for (int32_t k = 0; k < schedule.stages; ++k) {
        for (const Op& op : schedule.stageOps[k]) costs[k].push_back(opCost(k, step, op));
      }
      BS_ASSIGN_OR_RETURN(const layout::Simulation sim,
                          layout::simulate(schedule, layout::CostModel{}, costs));
      for (int32_t k = 0; k < schedule.stages; ++k) {
        out.bubble[k] += sim.makespan > 0 ? sim.stages[k].idle / sim.makespan : 0.0;
      }
      out.stepNs += sim.makespan;
      ++out.steps;
      out.stepOpCostsNs.push_back(std::move(costs));
    }
    if (out.steps > 0) {
      for (double& b : out.bubble) b /= out.steps;
      out.stepNs /= out.steps;
    }
    return out;
  }

 private:
  // The largest CPU time of an op over the stage's ranks in `step`.
  double stageCpu(int32_t k, int32_t step, int32_t mb, int32_t chunk, const std::string& name,
                  bool fallback) const {
    double worst = -1;
    for (int32_t rank : stageRanks_.at(k)) {
      if (auto c = m_.op(rank, step, mb, chunk, name)) worst = std::max(worst, c->cpuNs);
    }
    if (worst >= 0 || !fallback) return std::max(worst, 0.0);
    auto it = medianOf_.find(name);
    return it == medianOf_.end() ? 0.0 : it->second;
  }

  // The least, over the stage's ranks, of the dp/zero communication an op
  // stands for: a per-micro-batch collective its micro-batch's; the step's
  // gather of updated parameters the step-level all-gathers; the step's
  // gradient collective the rest of the step's.
  double dataParallelComm(int32_t k, int32_t step, const Op& op) const {
    if (l_.dp <= 1) return 0.0;
    const bool gather = op.type == OpType::kAllGatherParams;
    double least = -1;
    for (int32_t rank : stageRanks_.at(k)) {
      double sum = 0;
      for (const CommSample& c : m_.comms) {
        if (c.rank != rank || c.step != step || (c.dim != "dp" && c.dim != "zero")) continue;
        const bool stepGather = c.microBatch < 0 && c.collective == "all_gather";
        const bool mine = op.microBatch >= 0 ? c.microBatch == op.microBatch
                          : gather           ? stepGather
                                             : !stepGather && (c.microBatch < 0 || !perMicroBatch_);
        if (mine) sum += c.wallNs;
      }
      least = least < 0 ? sum : std::min(least, sum);
    }
    return std::max(least, 0.0);
  }

  double opCost(int32_t k, int32_t step, const Op& op) const {
    switch (op.type) {
      case OpType::kForward:
        return stageCpu(k, step, op.microBatch, op.chunk, "forward", true);
      case OpType::kBackward:
      case OpType::kBackwardInput: {
        const char* name = op.type == OpType::kBackward ? "backward" : "backward_input";
        return stageCpu(k, step, op.microBatch, op.chunk, name, true) +
               (l_.recompute ? stageCpu(k, step, op.microBatch, op.chunk, "recompute", false)
                             : 0.0);
      }
      case OpType::kBackwardWeight:
        return stageCpu(k, step, op.microBatch, op.chunk, "backward_weight", true);
      case OpType::kOptimizerStep:
        return stageCpu(k, step, -1, -1, "optimizer", true);
      case OpType::kAllReduceGrads:
      case OpType::kReduceScatterGrads:
      case OpType::kAllGatherParams:
        return dataParallelComm(k, step, op);
      case OpType::kSendActivation:
      case OpType::kSendGrad:
        return p2pNs_;
      case OpType::kRecvActivation:
      case OpType::kRecvGrad:
        return -1.0;
    }
    return -1.0;
  }

  const MeasuredOps& m_;
  const layout::Layout& l_;
  std::map<int32_t, std::vector<int32_t>> stageRanks_;
  std::map<std::string, double> medianOf_;
  double p2pNs_ = 0;
  bool perMicroBatch_ = false;  // ZeRO 2/3: gradient collectives per micro-batch
};

}  // namespace

Result<IdealReplay> replayIdealHardware(const MeasuredOps& measured) {
  if (!measured.layout) {
    return Status::invalidArgument("the run has no readable layout: nothing to replay");
  }
  if (!measured.cpuMeasured) {
    return Status::unsupported(
        "the run's spans carry no thread CPU time (traced before schema v5): nothing to replay");
  }
  return Replayer(measured).run();
}

Result<int64_t> writeReplayedRun(storage::TraceWriter& writer, const MeasuredOps& measured,
                                 const IdealReplay& replay, const std::string& name) {
  if (!measured.layout) {
    return Status::invalidArgument("the run has no readable layout: nothing to replay");
  }
  if (replay.stepOpCostsNs.empty()) return Status::invalidArgument("the replay has no steps");
  storage::SimulatedRunOptions o;
  o.name = name;
  o.unitNs = 1;
  o.costs.forward = 1;  // every op has its own cost (stepOpCostsNs)
  o.costs.backwardInput = 1;
  o.costs.comm = replay.p2pNs;
  o.opCostsByStep = replay.stepOpCostsNs;
  o.firstStep = replay.firstStep;
  return storage::writeSimulatedRun(writer, *measured.layout, o);
}

}  // namespace bubblescope::analysis
