#include "gui/synthetic_trace.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "engine/layout/simulator.h"
#include "storage/trace_writer.h"

namespace bubblescope::gui {

namespace {

using layout::OpType;
using tracer::EventKind;
using tracer::Lane;

tracer::Event makeEvent(int32_t rank, Lane lane, EventKind kind, int64_t s, int64_t e, int32_t step,
                        int32_t mb, int32_t stage, int32_t chunk) {
  tracer::Event ev;
  ev.rank = rank;
  ev.lane = lane;
  ev.kind = kind;
  ev.name = std::string(tracer::toString(kind));
  ev.startNs = s;
  ev.endNs = std::max(s, e);
  ev.step = step;
  ev.microBatch = mb;
  ev.stage = stage;
  ev.chunk = chunk;
  return ev;
}

}  // namespace

Result<int64_t> writeSyntheticTrace(const std::string& path, const SyntheticTraceOptions& o) {
  BS_ASSIGN_OR_RETURN(layout::Schedule schedule,
                      layout::makeSchedule(o.schedule, o.pp, o.microBatches, o.virtualChunks));
  layout::CostModel costs;
  costs.forward = 1.0;
  costs.backwardInput = schedule.splitsBackward() ? 1.0 : 2.0;
  costs.backwardWeight = schedule.splitsBackward() ? 1.0 : 0.0;
  costs.comm = 0.05;
  costs.gradSync = o.dp > 1 ? 1.5 : 0.0;
  costs.optimizer = 0.3;
  BS_ASSIGN_OR_RETURN(layout::Simulation sim, layout::simulate(schedule, costs));
  const double unitNs = static_cast<double>(o.forwardNs);
  const auto stepNs = static_cast<int64_t>(sim.makespan * unitNs * 1.02);

  BS_ASSIGN_OR_RETURN(auto writer, storage::TraceWriter::open(path));
  storage::RunInfo info;
  nlohmann::json layoutJson = {{"dp", o.dp},
                               {"tp", 1},
                               {"pp", o.pp},
                               {"schedule", layout::scheduleKindName(o.schedule)},
                               {"micro_batches", o.microBatches},
                               {"virtual_chunks", o.virtualChunks}};
  info.name = "synthetic " + std::string(layout::scheduleKindName(o.schedule));
  info.layoutJson = layoutJson.dump();
  info.modelJson = R"({"preset":"synthetic"})";
  info.worldSize = o.pp * o.dp;
  info.simulated = true;
  BS_ASSIGN_OR_RETURN(int64_t runId, writer->beginRun(info));
  // Rank = stage·dp + d, so a stage's dp replicas sit together.
  for (int32_t stage = 0; stage < o.pp; ++stage) {
    for (int32_t d = 0; d < o.dp; ++d) {
      storage::RankInfo r;
      r.rank = stage * o.dp + d;
      r.host = "synthetic";
      r.dp = d;
      r.pp = stage;
      BS_RETURN_IF_ERROR(writer->addRank(r));
    }
  }
  std::mt19937 rng(o.seed);
  std::uniform_real_distribution<double> jitter(0.97, 1.0);
  std::vector<tracer::Event> events;
  std::vector<tracer::StepRecord> steps;
  int64_t written = 0;
  const int64_t t0 = 1'000'000'000;
  for (int32_t step = 0; written < o.targetEvents; ++step) {
    const int64_t base = t0 + step * stepNs;
    for (int32_t stage = 0; stage < o.pp; ++stage) {
      const auto& ops = schedule.stageOps[stage];
      for (int32_t d = 0; d < o.dp; ++d) {
        const int32_t rank = stage * o.dp + d;
        int64_t last = base;
        for (const layout::OpInterval& iv : sim.stages[stage].timeline) {
          const layout::Op& op = ops[iv.opIndex];
          const int64_t s = base + static_cast<int64_t>(iv.start * unitNs);
          const int64_t full = static_cast<int64_t>((iv.end - iv.start) * unitNs);
          const int64_t e = s + static_cast<int64_t>(full * jitter(rng));
          const int32_t peerRank = op.peer >= 0 ? op.peer * o.dp + d : -1;
          auto add = [&](Lane lane, EventKind kind, int64_t a, int64_t b) {
            events.push_back(
                makeEvent(rank, lane, kind, a, b, step, op.microBatch, stage, op.chunk));
            events.back().peer = peerRank;
            last = std::max(last, b);
          };
          switch (op.type) {
            case OpType::kForward:
              add(Lane::kCompute, EventKind::kForward, s, e);
              break;
            case OpType::kBackward:
              add(Lane::kCompute, EventKind::kBackward, s, e);
              break;
            case OpType::kBackwardInput:
              add(Lane::kCompute, EventKind::kBackwardInput, s, e);
              break;
            case OpType::kBackwardWeight:
              add(Lane::kCompute, EventKind::kBackwardWeight, s, e);
              break;
            case OpType::kOptimizerStep:
              add(Lane::kCompute, EventKind::kOptimizer, s, e);
              break;
            case OpType::kSendActivation:
            case OpType::kSendGrad: {
              const int64_t dur = static_cast<int64_t>(0.02 * unitNs);
              add(Lane::kPipeline, EventKind::kSend, s, s + dur);
              events.back().bytes = 1 << 20;
              break;
            }
            case OpType::kRecvActivation:
            case OpType::kRecvGrad: {
              // The simulator's receive interval is the wait for the message.
              const int64_t end = base + static_cast<int64_t>(iv.end * unitNs);
              const int64_t dur = static_cast<int64_t>(0.02 * unitNs);
              if (end - dur > s) add(Lane::kPipeline, EventKind::kWait, s, end - dur);
              add(Lane::kPipeline, EventKind::kRecv, std::max(s, end - dur), end);
              events.back().bytes = 1 << 20;
              break;
            }
            case OpType::kAllReduceGrads:
            case OpType::kReduceScatterGrads:
              if (o.dp > 1) {
                add(Lane::kCommunication,
                    op.type == OpType::kAllReduceGrads ? EventKind::kAllReduce
                                                       : EventKind::kReduceScatter,
                    s, e);
                events.back().dim = tracer::ParallelDim::kDp;
                events.back().peer = -1;
              }
              break;
          }
        }
        steps.push_back(
            {rank, step, stage == o.pp - 1 ? 4.0 / (1 + 0.01 * step) : 0.0, 0, base, last});
        if (stage != o.pp - 1) steps.back().loss = std::nan("");
      }
    }
    written += static_cast<int64_t>(events.size());
    BS_RETURN_IF_ERROR(writer->appendEvents(events));
    BS_RETURN_IF_ERROR(writer->appendSteps(steps));
    events.clear();
    steps.clear();
  }
  BS_RETURN_IF_ERROR(writer->finishRun(storage::RunStatus::kFinished));
  return runId;
}

}  // namespace bubblescope::gui
