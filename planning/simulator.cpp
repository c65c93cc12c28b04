#include "planning/simulator.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace bubblescope::layout {
namespace {

// (isGrad, receiving stage, micro-batch, receiving chunk)
using MessageKey = std::tuple<bool, int32_t, int32_t, int32_t>;
struct Message {
  double arrival = 0;
  int32_t fromStage = 0;
  int32_t fromOp = 0;
};
using Work = std::pair<int32_t, int32_t>;  // (micro-batch, chunk)

struct StageState {
  size_t pc = 0;
  double clock = 0;
  std::set<Work> forwardDone, inputGradDone, weightGradDone, actIn, gradIn, reduced;
  bool synced = false, optimized = false, gathered = false;
  int32_t inFlight = 0;
  double normArrival = -1;  // when the stage reached its OptimizerStep (-1: not yet)
};

class Simulator {
 public:
  Simulator(const Schedule& s, const CostModel& c, const OpCosts& o)
      : s_(s), c_(c), o_(o), state_(s.stages) {
    result_.stages.resize(s.stages);
    for (const std::vector<Op>& ops : s.stageOps) {
      normStages_ += std::any_of(ops.begin(), ops.end(), [](const Op& op) {
        return op.type == OpType::kOptimizerStep;
      });
    }
  }

  Result<Simulation> run() {
    if (static_cast<int32_t>(s_.stageOps.size()) != s_.stages) {
      return Status::invalidArgument("schedule has " + std::to_string(s_.stageOps.size()) +
                                     " op lists for " + std::to_string(s_.stages) + " stages");
    }
    while (true) {
      bool progressed = false, done = true;
      for (int32_t k = 0; k < s_.stages; ++k) {
        while (state_[k].pc < s_.stageOps[k].size()) {
          BS_ASSIGN_OR_RETURN(bool ran, step(k));
          if (!ran) break;
          progressed = true;
        }
        if (state_[k].pc < s_.stageOps[k].size()) done = false;
      }
      if (done) break;
      if (!progressed) return deadlock();
    }
    BS_RETURN_IF_ERROR(checkComplete());
    return finish();
  }

 private:
  int32_t vstage(int32_t k, int32_t chunk) const { return s_.virtualStage(k, chunk); }
  int32_t lastV() const { return s_.virtualStages() - 1; }
  // The override of the current op of stage k, or `fallback`.
  double costOr(int32_t k, double fallback) const {
    const size_t pc = state_[k].pc;
    if (static_cast<size_t>(k) < o_.size() && pc < o_[k].size() && o_[k][pc] >= 0.0) {
      return o_[k][pc];
    }
    return fallback;
  }
  double chunkCost(int32_t k, double t) const { return costOr(k, t / s_.chunks); }

  Status opError(int32_t k, const std::string& what) const {
    const size_t pc = state_[k].pc;
    return Status::invalidArgument("stage " + std::to_string(k) + " op " + std::to_string(pc) +
                                   " " + toString(s_.stageOps[k][pc]) + ": " + what);
  }

  void record(int32_t k, double start, double end) {
    result_.stages[k].timeline.push_back({static_cast<int32_t>(state_[k].pc), start, end});
    state_[k].clock = end;
    ++state_[k].pc;
  }

  void compute(int32_t k, double duration) {
    const double start = state_[k].clock;
    result_.stages[k].busy += duration;
    record(k, start, start + duration);
  }

  // Returns false when the stage is blocked in a receive.
  Result<bool> step(int32_t k) {
    StageState& st = state_[k];
    const Op& op = s_.stageOps[k][st.pc];
    // Step-level: the optimizer step, the parameter gather, and a gradient
    // collective without a micro-batch (ZeRO 0/1).
    const bool perMicroBatch = op.type != OpType::kOptimizerStep &&
                               op.type != OpType::kAllGatherParams &&
                               !(isGradientCollective(op.type) && op.microBatch < 0);
    if (perMicroBatch && (op.microBatch < 0 || op.microBatch >= s_.microBatches || op.chunk < 0 ||
                          op.chunk >= s_.chunks)) {
      return opError(k, "micro-batch or chunk out of range");
    }
    const Work w{op.microBatch, op.chunk};
    const int32_t vs = vstage(k, op.chunk);
    const bool localPrev = s_.stages == 1;  // chunk boundaries stay on the rank
    switch (op.type) {
      case OpType::kForward: {
        if (st.forwardDone.count(w)) return opError(k, "runs a second time");
        if (vs > 0) {
          const bool ready = localPrev ? st.forwardDone.count({op.microBatch, op.chunk - 1}) > 0
                                       : st.actIn.count(w) > 0;
          if (!ready) return opError(k, "runs before its input activation was received");
        }
        st.forwardDone.insert(w);
        bumpInFlight(k, +1);
        compute(k, chunkCost(k, c_.forward));
        return true;
      }
      case OpType::kBackward:
      case OpType::kBackwardInput: {
        if (!st.forwardDone.count(w)) return opError(k, "runs before its Forward");
        if (st.inputGradDone.count(w)) return opError(k, "runs a second time");
        if (vs < lastV()) {
          const bool ready = localPrev ? st.inputGradDone.count({op.microBatch, op.chunk + 1}) > 0
                                       : st.gradIn.count(w) > 0;
          if (!ready) return opError(k, "runs before its output gradient was received");
        }
        st.inputGradDone.insert(w);
        double cost = c_.backwardInput;
        if (op.type == OpType::kBackward) {
          st.weightGradDone.insert(w);
          bumpInFlight(k, -1);
          cost += c_.backwardWeight;
        }
        compute(k, chunkCost(k, cost));
        return true;
      }
      case OpType::kBackwardWeight: {
        if (!st.inputGradDone.count(w)) return opError(k, "runs before its BackwardInput");
        if (st.weightGradDone.count(w)) return opError(k, "runs a second time");
        st.weightGradDone.insert(w);
        bumpInFlight(k, -1);
        compute(k, chunkCost(k, c_.backwardWeight));
        return true;
      }
      case OpType::kSendActivation:
      case OpType::kSendGrad:
        return send(k, op, w, vs);
      case OpType::kRecvActivation:
      case OpType::kRecvGrad:
        return receive(k, op, w, vs);
      case OpType::kAllReduceGrads:
      case OpType::kReduceScatterGrads:
        return gradientCollective(k, op, w);
      case OpType::kOptimizerStep: {
        const size_t all = static_cast<size_t>(s_.microBatches) * s_.chunks;
        if (st.weightGradDone.size() != all) {
          return opError(k, "runs before every backward of the stage finished");
        }
        if (!st.synced && st.reduced.size() != all) {
          return opError(k, "runs before the stage's gradients were reduced");
        }
        if (st.optimized) return opError(k, "runs a second time");
        // The stages meet at the gradient norm's all-reduce: the step runs
        // once the last of them has reached its own.
        if (st.normArrival < 0) {
          st.normArrival = st.clock;
          ++normArrived_;
          normMeet_ = std::max(normMeet_, st.clock);
        }
        if (normArrived_ < normStages_) return false;  // blocked
        st.optimized = true;
        st.clock = normMeet_;
        compute(k, costOr(k, c_.optimizer));
        return true;
      }
      case OpType::kAllGatherParams:
        if (!st.optimized) return opError(k, "runs before the OptimizerStep");
        if (st.gathered) return opError(k, "runs a second time");
        st.gathered = true;
        compute(k, costOr(k, c_.paramGather));
        return true;
    }
    return opError(k, "unknown op type");
  }

  // Once per step after every backward (mb -1), or once per (micro-batch,
  // chunk) after its weight gradients (ZeRO 2/3); never both.
  Result<bool> gradientCollective(int32_t k, const Op& op, const Work& w) {
    StageState& st = state_[k];
    if (op.microBatch >= 0) {
      if (!st.weightGradDone.count(w)) return opError(k, "runs before its backward finished");
      if (st.synced || !st.reduced.insert(w).second) return opError(k, "runs a second time");
      compute(k, costOr(k, c_.gradSync / s_.chunks));
      return true;
    }
    const size_t all = static_cast<size_t>(s_.microBatches) * s_.chunks;
    if (st.weightGradDone.size() != all) {
      return opError(k, "runs before every backward of the stage finished");
    }
    if (st.synced || !st.reduced.empty()) return opError(k, "runs a second time");
    st.synced = true;
    compute(k, costOr(k, c_.gradSync));
    return true;
  }

  void bumpInFlight(int32_t k, int32_t delta) {
    state_[k].inFlight += delta;
    auto& peak = result_.stages[k].peakInFlight;
    peak = std::max(peak, state_[k].inFlight);
  }

  Result<bool> send(int32_t k, const Op& op, const Work& w, int32_t vs) {
    const bool grad = op.type == OpType::kSendGrad;
    StageState& st = state_[k];
    if (grad ? !st.inputGradDone.count(w) : !st.forwardDone.count(w)) {
      return opError(k, grad ? "sends before its backward ran" : "sends before its Forward ran");
    }
    const int32_t target = grad ? vs - 1 : vs + 1;
    if (target < 0 || target > lastV()) {
      return opError(k, "has no virtual stage to send to");
    }
    const int32_t toStage = target % s_.stages, toChunk = target / s_.stages;
    if (op.peer != toStage) {
      return opError(k, "names peer " + std::to_string(op.peer) + " but the " +
                            (grad ? "previous" : "next") + " virtual stage is on stage " +
                            std::to_string(toStage));
    }
    const MessageKey key{grad, toStage, op.microBatch, toChunk};
    if (inbox_.count(key) || sent_.count(key)) return opError(k, "sends a second time");
    sent_.insert(key);
    inbox_[key] = {st.clock + costOr(k, c_.comm), k, static_cast<int32_t>(st.pc)};
    record(k, st.clock, st.clock);
    return true;
  }

  Result<bool> receive(int32_t k, const Op& op, const Work& w, int32_t vs) {
    const bool grad = op.type == OpType::kRecvGrad;
    const int32_t source = grad ? vs + 1 : vs - 1;
    if (source < 0 || source > lastV()) {
      return opError(k, "has no virtual stage to receive from");
    }
    const int32_t fromStage = source % s_.stages;
    if (op.peer != fromStage) {
      return opError(k, "names peer " + std::to_string(op.peer) + " but the sending virtual " +
                            "stage is on stage " + std::to_string(fromStage));
    }
    auto it = inbox_.find(MessageKey{grad, k, op.microBatch, op.chunk});
    if (it == inbox_.end()) return false;  // blocked
    StageState& st = state_[k];
    const double arrival = it->second.arrival;
    const double start = st.clock,
                 end = arrival > st.clock ? arrival + std::max(0.0, c_.recvWake) : st.clock;
    (grad ? st.gradIn : st.actIn).insert(w);
    inbox_.erase(it);
    result_.stages[k].waitRecv += end - start;
    record(k, start, end);
    return true;
  }

  Status deadlock() const {
    std::string msg = "deadlock:";
    bool first = true;
    for (int32_t k = 0; k < s_.stages; ++k) {
      const size_t pc = state_[k].pc;
      if (pc >= s_.stageOps[k].size()) continue;
      msg += std::string(first ? " " : "; ") + "stage " + std::to_string(k) + " waits at op " +
             std::to_string(pc) + " " + toString(s_.stageOps[k][pc]);
      first = false;
    }
    return Status::failedPrecondition(msg);
  }

  Status checkComplete() const {
    if (!inbox_.empty()) {
      const Message& msg = inbox_.begin()->second;
      const Op& op = s_.stageOps[msg.fromStage][msg.fromOp];
      return Status::failedPrecondition("stage " + std::to_string(msg.fromStage) + " op " +
                                        std::to_string(msg.fromOp) + " " + toString(op) +
                                        " is never received");
    }
    for (int32_t k = 0; k < s_.stages; ++k) {
      const StageState& st = state_[k];
      for (int32_t mb = 0; mb < s_.microBatches; ++mb) {
        for (int32_t c = 0; c < s_.chunks; ++c) {
          const char* missing = !st.forwardDone.count({mb, c})      ? "Forward"
                                : !st.inputGradDone.count({mb, c})  ? "Backward"
                                : !st.weightGradDone.count({mb, c}) ? "BackwardWeight"
                                                                    : nullptr;
          if (missing) {
            return Status::failedPrecondition("stage " + std::to_string(k) + " never runs " +
                                              missing + " for mb " + std::to_string(mb) +
                                              ", chunk " + std::to_string(c));
          }
        }
      }
    }
    for (int32_t k = 0; k < s_.stages; ++k) {
      BS_RETURN_IF_ERROR(checkOpList(s_.stageOps[k], s_.zeroStage, k, s_.chunks));
    }
    return Status::ok();
  }

  Simulation finish() {
    Simulation& r = result_;
    for (int32_t k = 0; k < s_.stages; ++k) r.stages[k].finish = state_[k].clock;
    for (const auto& st : r.stages) r.makespan = std::max(r.makespan, st.finish);
    double idle = 0;
    for (auto& st : r.stages) {
      st.idle = r.makespan - st.busy;
      idle += st.idle;
    }
    r.bubbleFraction = r.makespan > 0 ? idle / (s_.stages * r.makespan) : 0.0;
    return std::move(result_);
  }

  const Schedule& s_;
  const CostModel& c_;
  const OpCosts& o_;
  std::vector<StageState> state_;
  std::map<MessageKey, Message> inbox_;
  std::set<MessageKey> sent_;
  Simulation result_;
  int32_t normStages_ = 0;   // the stages whose list holds an OptimizerStep
  int32_t normArrived_ = 0;  // the stages that have reached it
  double normMeet_ = 0;      // the latest of their arrivals
};

}  // namespace

int32_t Simulation::maxPeakInFlight() const {
  int32_t peak = 0;
  for (const auto& st : stages) peak = std::max(peak, st.peakInFlight);
  return peak;
}

double Simulation::totalIdle() const {
  double idle = 0;
  for (const auto& st : stages) idle += st.idle;
  return idle;
}

Result<Simulation> simulate(const Schedule& schedule, const CostModel& costs) {
  static const OpCosts kNone;
  return Simulator(schedule, costs, kNone).run();
}

Result<Simulation> simulate(const Schedule& schedule, const CostModel& costs,
                            const OpCosts& opCosts) {
  return Simulator(schedule, costs, opCosts).run();
}

CostModel unitCosts(const Schedule& schedule) {
  CostModel c;
  c.forward = schedule.chunks;
  c.backwardInput = schedule.chunks;
  c.backwardWeight = schedule.splitsBackward() ? schedule.chunks : 0.0;
  c.comm = 0;
  return c;
}

}  // namespace bubblescope::layout
