#include "storage/simulated_run.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <vector>

#include "engine/layout/grid.h"

namespace bubblescope::storage {
namespace {

using layout::OpType;
using trace_model::Event;
using trace_model::EventKind;
using trace_model::Lane;

// One rank's replay of its stage's op list within one step.
struct RankReplay {
  int32_t rank = 0;
  layout::GridCoord coord;
  const layout::ProcessGrid* grid = nullptr;
  int64_t baseNs = 0;  // the step's start
  int64_t unitNs = 1;
  int64_t commNs = 0;    // t_comm in ns
  int64_t p2pBytes = 0;  // one pipeline message: (B, T, C) fp32
  int32_t step = 0;
  bool dataParallel = false;

  int64_t ns(double units) const { return baseNs + std::llround(units * unitNs); }

  Event event(Lane lane, EventKind kind, const layout::Op& op, int64_t s, int64_t e) const {
    Event ev;
    ev.rank = rank;
    ev.lane = lane;
    ev.kind = kind;
    ev.name = std::string(trace_model::toString(kind));
    ev.startNs = s;
    ev.endNs = std::max(s, e);
    ev.step = step;
    ev.microBatch = op.microBatch;
    ev.stage = coord.pp;
    ev.chunk = op.microBatch >= 0 ? op.chunk : -1;
    if (op.peer >= 0) {
      layout::GridCoord peer = coord;
      peer.pp = op.peer;
      ev.peer = grid->rankOf(peer);
      ev.dim = trace_model::ParallelDim::kPp;
      ev.bytes = p2pBytes;
    }
    return ev;
  }

  void add(const layout::Op& op, const layout::OpInterval& iv, std::vector<Event>& out) const {
    const int64_t s = ns(iv.start), e = ns(iv.end);
    switch (op.type) {
      case OpType::kForward:
        out.push_back(event(Lane::kCompute, EventKind::kForward, op, s, e));
        return;
      case OpType::kBackward:
        out.push_back(event(Lane::kCompute, EventKind::kBackward, op, s, e));
        return;
      case OpType::kBackwardInput:
        out.push_back(event(Lane::kCompute, EventKind::kBackwardInput, op, s, e));
        return;
      case OpType::kBackwardWeight:
        out.push_back(event(Lane::kCompute, EventKind::kBackwardWeight, op, s, e));
        return;
      case OpType::kOptimizerStep:
        out.push_back(event(Lane::kCompute, EventKind::kOptimizer, op, s, e));
        return;
      case OpType::kSendActivation:
      case OpType::kSendGrad:
        out.push_back(event(Lane::kPipeline, EventKind::kSend, op, s, s));
        return;
      case OpType::kRecvActivation:
      case OpType::kRecvGrad: {
        // The receive completes at e (its message's arrival, plus the
        // wake-up when it had to wait): the last t_comm before e is drawn
        // as the transfer, what comes before as a wait (as a measured
        // receive's wait span holds its wake-up).
        const int64_t transferStart = std::max(s, e - commNs);
        if (transferStart > s)
          out.push_back(event(Lane::kPipeline, EventKind::kWait, op, s, transferStart));
        out.push_back(event(Lane::kPipeline, EventKind::kRecv, op, transferStart, e));
        return;
      }
      case OpType::kAllReduceGrads:
      case OpType::kReduceScatterGrads: {
        if (!dataParallel) return;
        const bool reduceScatter = op.type == OpType::kReduceScatterGrads;
        Event ev =
            event(Lane::kCommunication,
                  reduceScatter ? EventKind::kReduceScatter : EventKind::kAllReduce, op, s, e);
        ev.dim = reduceScatter ? trace_model::ParallelDim::kZero : trace_model::ParallelDim::kDp;
        out.push_back(ev);
        return;
      }
      case OpType::kAllGatherParams: {
        if (!dataParallel) return;
        Event ev = event(Lane::kCommunication, EventKind::kAllGather, op, s, e);
        ev.dim = trace_model::ParallelDim::kZero;
        out.push_back(ev);
        return;
      }
    }
  }
};

Status checkCosts(const layout::CostModel& c, int64_t unitNs) {
  for (double v : {c.forward, c.backwardInput, c.backwardWeight, c.comm, c.gradSync, c.optimizer,
                   c.paramGather}) {
    if (!(v >= 0.0) || !std::isfinite(v)) {
      return Status::invalidArgument("simulated op costs must be finite and >= 0");
    }
  }
  if (c.forward <= 0.0) return Status::invalidArgument("the simulated forward cost must be > 0");
  if (unitNs <= 0) return Status::invalidArgument("the simulated cost unit must be > 0 ns");
  return Status::ok();
}

// `sims` holds one simulation per step (o.opCostsByStep), or one for every step.
Status writeSteps(TraceWriter& writer, const layout::Layout& layout,
                  const layout::Schedule& schedule, const std::vector<layout::Simulation>& sims,
                  const layout::ProcessGrid& grid, const SimulatedRunOptions& o) {
  const layout::ModelConfig& model = layout.model;
  RankReplay replay;
  replay.grid = &grid;
  replay.unitNs = o.unitNs;
  replay.commNs = std::llround(o.costs.comm * o.unitNs);
  replay.p2pBytes = int64_t{layout.microBatchSize} * model.seqLen * model.hidden * 4;
  replay.dataParallel = layout.dp > 1;
  std::vector<Event> events;
  std::vector<trace_model::StepRecord> steps;
  std::vector<trace_model::Sample> samples;
  const bool perStep = !o.opCostsByStep.empty();
  const int32_t stepCount = perStep ? static_cast<int32_t>(sims.size()) : layout.steps;
  int64_t baseNs = 0;
  for (int32_t i = 0; i < stepCount; ++i) {
    const layout::Simulation& sim = sims[perStep ? i : 0];
    const int64_t makespanNs = std::llround(sim.makespan * o.unitNs);
    replay.step = o.firstStep + i;
    replay.baseNs = baseNs;
    baseNs += makespanNs;
    for (int32_t rank = 0; rank < grid.worldSize(); ++rank) {
      replay.rank = rank;
      replay.coord = grid.coordOf(rank);
      const auto& ops = schedule.stageOps[replay.coord.pp];
      for (const layout::OpInterval& iv : sim.stages[replay.coord.pp].timeline) {
        replay.add(ops[iv.opIndex], iv, events);
      }
      steps.push_back({rank, replay.step, std::numeric_limits<double>::quiet_NaN(), 0,
                       replay.baseNs, replay.baseNs + makespanNs});
      if (i == 0 && replay.coord.pp < static_cast<int32_t>(o.memoryBytesByStage.size())) {
        for (const auto& [category, bytes] : o.memoryBytesByStage[replay.coord.pp]) {
          samples.push_back({rank, "mem." + category, replay.baseNs, bytes});
        }
      }
    }
    BS_RETURN_IF_ERROR(writer.appendEvents(events));
    BS_RETURN_IF_ERROR(writer.appendSteps(steps));
    BS_RETURN_IF_ERROR(writer.appendSamples(samples));
    samples.clear();
    events.clear();
    steps.clear();
  }
  return Status::ok();
}

}  // namespace

Result<int64_t> writeSimulatedRun(TraceWriter& writer, const layout::Layout& layout,
                                  const SimulatedRunOptions& o) {
  BS_RETURN_IF_ERROR(checkCosts(o.costs, o.unitNs));
  BS_ASSIGN_OR_RETURN(layout::Schedule schedule, layout::scheduleFor(layout));
  std::vector<layout::Simulation> sims;
  if (o.opCostsByStep.empty()) {
    BS_ASSIGN_OR_RETURN(layout::Simulation sim, layout::simulate(schedule, o.costs, o.opCosts));
    sims.push_back(std::move(sim));
  }
  for (const layout::OpCosts& costs : o.opCostsByStep) {
    BS_ASSIGN_OR_RETURN(layout::Simulation sim, layout::simulate(schedule, o.costs, costs));
    sims.push_back(std::move(sim));
  }
  BS_ASSIGN_OR_RETURN(layout::ProcessGrid grid,
                      layout::ProcessGrid::create(layout.dp, layout.pp, layout.tp));
  RunInfo info;
  info.name = o.name.empty()
                  ? "simulated " + std::string(layout::scheduleKindName(layout.schedule)) + " pp" +
                        std::to_string(layout.pp) + " m" + std::to_string(layout.microBatches)
                  : o.name;
  info.layoutJson = layout::toJson(layout).dump();
  info.modelJson = layout::toJson(layout.model).dump();
  info.backend = layout::backendName(layout.backend);
  info.worldSize = grid.worldSize();
  info.simulated = true;
  BS_ASSIGN_OR_RETURN(int64_t runId, writer.beginRun(info));
  Status s = Status::ok();
  for (int32_t rank = 0; rank < grid.worldSize() && s.isOk(); ++rank) {
    const layout::GridCoord c = grid.coordOf(rank);
    RankInfo r;
    r.rank = rank;
    r.host = "simulated";
    r.device = "simulated";
    r.dp = c.dp;
    r.tp = c.tp;
    r.pp = c.pp;
    s = writer.addRank(r);
  }
  if (s.isOk()) s = writeSteps(writer, layout, schedule, sims, grid, o);
  if (!s.isOk()) {
    (void)writer.finishRun(RunStatus::kFailed, s.message());
    return s;
  }
  BS_RETURN_IF_ERROR(writer.finishRun(RunStatus::kFinished));
  return runId;
}

}  // namespace bubblescope::storage
