// Playback of a simulated step, op by op: what the teaching lab steps through.
//
// From a Schedule and its Simulation (simulator.h): the ops that take time,
// in the order they start; the bubble so far after the first k of them; and
// the activations each stage holds over time (the memory lesson: 1F1B's
// stage k holds at most p - k micro-batches, GPipe's m).
//
// Pure functions of their arguments; times in the simulation's units.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/layout/schedule.h"
#include "planning/simulator.h"

namespace bubblescope::layout {

// One op that took time (compute, gradient collective, optimizer step):
// sends and receives are not listed (a receive's wait is bubble).
struct PlaybackOp {
  int32_t stage = 0;
  int32_t opIndex = 0;  // into Schedule::stageOps[stage]
  Op op;
  double start = 0;
  double end = 0;
};

// Every op of positive duration, ordered by start time, then stage, then
// list order. Requires `sim` to be simulate(schedule, ...)'s result.
std::vector<PlaybackOp> playbackOrder(const Schedule& schedule, const Simulation& sim);

// The idle share of the stages over [0, T] once the first `shown` ops of
// `order` have run: 1 - (their total duration) / (stages · T), T = the latest
// end among them (0 when shown == 0). With every op shown it equals
// Simulation::bubbleFraction.
double bubbleSoFar(const std::vector<PlaybackOp>& order, int32_t stages, size_t shown);

// The number of (micro-batch, chunk) activations a stage holds from `time`
// on, until the next point.
struct InFlightPoint {
  double time = 0;
  int32_t count = 0;
};

// Per stage, the step function of activations in flight over the first
// `shown` ops of `order`: +1 when a Forward starts, -1 when the op that
// finishes its backward ends (Backward, or BackwardWeight when the schedule
// splits it). Each stage's list starts with {0, 0}; points are in time order,
// one per change (ties merged). Its maximum over a whole step equals
// StageStats::peakInFlight.
std::vector<std::vector<InFlightPoint>> activationsInFlight(const std::vector<PlaybackOp>& order,
                                                            int32_t stages, size_t shown);
// The largest count of one stage's step function.
int32_t peakOf(const std::vector<InFlightPoint>& points);

}  // namespace bubblescope::layout
