// simulate(): replays a Schedule's per-stage op lists under a cost model.
//
// The simulator is also the schedules' checker. It executes each stage's list
// strictly in order with the runtime's semantics:
//  - a send is non-blocking (MPI_Isend); its message can be received t_comm
//    after the send op ran;
//  - a receive blocks until the matching message has arrived, and, when it
//    had to wait for it, t_wake (CostModel::recvWake) longer; it matches by
//    (direction, micro-batch, receiving chunk) and must name the sending stage
//    as its peer;
//  - compute ops run back to back; a chunk op costs 1/v of the stage's cost;
//  - the OptimizerStep of every stage starts when the last stage has reached
//    its own: the gradient norm that clips the step is all-reduced over the
//    pipeline first (schedule_executor.cpp), so a stage that finished its
//    backwards early waits there (idle, not a receive's wait); its cost is
//    counted from that meeting point.
// It returns an error, naming the stage, op index and op, for a deadlock (every
// unfinished stage blocked in a receive), an op whose inputs are not ready
// (Forward before its activation arrived, BackwardWeight before its
// BackwardInput, a gradient collective before the backward it reduces, an
// optimizer step before the last collective, AllGatherParams before the
// optimizer step...), an op run twice, a send to a stage that is not the
// adjacent virtual stage, or a message nobody receives; and, once a list has
// run, for a list that breaks checkOpList (schedule.h: the gradient
// collectives, the optimizer step and the all-gather that a training step
// must hold), the rule the executor also enforces.
//
// Pure and deterministic; no threads.
#pragma once

#include <cstdint>
#include <vector>

#include "common/result.h"
#include "engine/layout/schedule.h"

namespace bubblescope::layout {

// Times in arbitrary units (the same unit throughout).
struct CostModel {
  double forward = 1.0;         // t_F: one micro-batch through all of a stage's chunks
  double backwardInput = 1.0;   // t_B: input-gradient half of the backward
  double backwardWeight = 0.0;  // t_W: weight-gradient half; a fused Backward costs t_B + t_W
  double comm = 0.0;            // t_comm: from a send until its receive can complete
  // A receive that blocked goes on this long after its message arrived (the
  // waiting rank's wake-up, Calibration's kReceiveWake); one that found its
  // message there pays nothing. Idle time, not communication.
  double recvWake = 0.0;
  // One reduction of all the stage's gradients: the step's gradient
  // collective (ZeRO 0/1); under ZeRO 2/3 each micro-batch's
  // ReduceScatterGrads of one chunk costs gradSync / v (m of them per chunk).
  double gradSync = 0.0;
  double optimizer = 0.0;    // the optimizer step
  double paramGather = 0.0;  // AllGatherParams (ZeRO 1/2), after the optimizer step
};

// One op's execution interval. For a receive, start is when the stage began to
// wait and end when the message was there; sends take no time.
struct OpInterval {
  int32_t opIndex = 0;  // index into Schedule::stageOps[stage]
  double start = 0;
  double end = 0;
};

struct StageStats {
  double busy = 0;      // compute + gradient collectives + optimizer + gather time
  double idle = 0;      // makespan - busy: the stage's bubble
  double waitRecv = 0;  // time spent blocked in receives (part of idle)
  double finish = 0;    // when the stage's last op ended
  // Peak number of (micro-batch, chunk) pairs whose Forward has run and whose
  // backward has not finished (the W half for split schedules): the
  // activations the stage must hold.
  int32_t peakInFlight = 0;
  std::vector<OpInterval> timeline;  // one per op, in list order
};

struct Simulation {
  std::vector<StageStats> stages;
  double makespan = 0;        // when the last stage finished
  double bubbleFraction = 0;  // sum of idle / (p * makespan)

  int32_t maxPeakInFlight() const;
  double totalIdle() const;
};

Result<Simulation> simulate(const Schedule& schedule, const CostModel& costs);

// Per-op costs that replace the CostModel's: opCosts[stage][opIndex] is the
// duration of a compute op, gradient collective or optimizer step, or, for a
// send, the time from the send until its receive can complete. A negative
// entry (or a missing stage or index) keeps the CostModel's cost. Unlike the
// CostModel's, a chunk op's entry is its own cost, not divided by v. Used by
// the ideal-hardware replay (measured costs per op) and the prediction
// (stages of unequal cost).
using OpCosts = std::vector<std::vector<double>>;
Result<Simulation> simulate(const Schedule& schedule, const CostModel& costs,
                            const OpCosts& opCosts);

// Costs under which every chunk op takes one time unit: t_F = t_B = v, and
// t_W = v for split schedules (0 otherwise); no communication cost.
CostModel unitCosts(const Schedule& schedule);

}  // namespace bubblescope::layout
