// simulateTimeShared(): a pipeline's step when its stages' ranks time-share
// a host's cores (issue 35, point 1; docs/prediction.md, "More ranks than
// cores").
//
// The model. A host of C cores runs the layout's stages, `ranksPerStage`
// ranks each, beside B busy threads of other work. At time t, n(t) ranks are
// runnable: those of every stage that is running an op (compute, its
// collectives, the optimizer), not those blocked in a receive, whose waits
// leave their cores to the others. The scheduler shares the cores evenly
// (processor sharing), so a rank's compute advances at 1 / s(t) of a core's
// pace, s(t) = max(1, (n(t) + B) / C) (of which a tp group's ranks pay a
// measured share, TimeSharing::paid). An op of stage k costs
//     duration = fixed + work · s_op
// where `work` is its compute at a whole core's pace, `fixed` the rest (its
// collectives' times, which the calibration measured as they are) and s_op
// the harmonic mean of s(t) over the op's own interval: the stretch under
// which its work exactly fits the time it had. Uniform stretching by
// (R + B) / C, what a single-stage layout gets, overstates a pipeline's
// step: in its bubbles half the stages wait and the rest run up to a core
// each.
//
// The timeline and the stretches depend on each other; they are solved by
// fixed-point iteration from the uniform stretch: simulate (simulator.h)
// with the current s_op, measure each op's harmonic-mean stretch on the
// resulting n(t), move halfway to it, until no stretch moves by more than
// 1e-6 or 200 rounds have run (the last timeline is returned either way;
// with every stretch between 1 and (R + B) / C it is bounded by the
// timelines at those two).
//
// With one rank per stage and no background load the cores are not shared
// evenly: a running rank keeps its core and a woken one joins its waker's
// (core_placement.h), so TimeSharing::model can say kPlacement: s(t) is then
// each stage's own, the ranks on its core, by CorePlacement over the current
// timeline, and the fixed point is sought the same way.
//
// Pure and deterministic; no threads.
#pragma once

#include <cstdint>

#include "common/result.h"
#include "planning/simulator.h"

namespace bubblescope::layout {

// How the runnable ranks share the cores (see above).
enum class CoreModel {
  kProcessorSharing,  // evenly: s(t) = max(1, (n(t) + B) / C) for every rank
  kPlacement,         // per core, by CorePlacement; one rank per stage, B = 0
};

struct TimeSharing {
  int32_t cores = 0;         // C; <= 0: no limit (every stretch 1)
  double ranksPerStage = 1;  // the ranks one stage puts on the host (dp × tp)
  double background = 0;     // B: busy threads of other work (contention.h)
  // The share of s(t) - 1 an op pays, in [0, 1]: its stretch is
  // 1 + (s(t) - 1) · paid. 1 but for a tp group's ranks, whose waits for
  // each other in their per-layer collectives, priced by the shared-cores
  // tp fit, hold the rest (core_sharing.h, CoreSharing::paid).
  double paid = 1;
  CoreModel model = CoreModel::kProcessorSharing;
};

struct TimeSharedSimulation {
  Simulation simulation;
  OpCosts durations;  // [stage][op] the durations of the final timeline
  int32_t rounds = 0;
  bool converged = false;
};

// `fixedNs` and `workNs` are indexed like simulate()'s OpCosts: a send's
// entry is its transfer time (fixed), a receive's is negative (the
// simulator's wait). Both must have the schedule's shape.
// Errors: a shape mismatch, a negative or non-finite work, a paid share
// outside [0, 1] (NaN included), kPlacement with more than one rank a stage
// or a background, and whatever simulate() reports.
// The mean stretch of a timeline's work: sum of (duration - fixed) over
// sum of work, over every op of `durations` (a TimeSharedSimulation's) with
// the same shape as `fixedNs` and `workNs`; 1 without work.
double meanStretch(const OpCosts& durations, const OpCosts& fixedNs, const OpCosts& workNs);

Result<TimeSharedSimulation> simulateTimeShared(const Schedule& schedule, const CostModel& base,
                                                const OpCosts& fixedNs, const OpCosts& workNs,
                                                const TimeSharing& sharing);

}  // namespace bubblescope::layout
