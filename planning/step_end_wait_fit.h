// fitStepEndWait(): the wait at the step's first gradient collective among
// ranks that share cores (docs/prediction.md, "More ranks than cores"), from
// one measured run of such a layout (calibrate's dp C·2 run on C cores,
// cli/calibrate_benchmark.h).
//
// Ranks that time-share cores reach the step-end all-reduce (ZeRO 1's
// reduce-scatter) at the scheduler's whim: the last one in was descheduled
// while the others finished, and every rank waits for it. The shared-cores
// dp fit prices the collective's transfer (the lower quartile of its calls:
// the earliest finishers'), the straggler factor the compute's spread; on
// the 2-core VM dp4 m2 of `small` still measured 193 ms against 166 ms
// predicted, the difference all exposed dp communication (17-51 ms a rank
// measured, 13 ms predicted).
//
// Contract: the wait is stored per parameter of the rank's stage
// (kSharedCoresPart / kStepEndWaitOp, ns in both cost columns) and the
// prediction adds it to the step-end gradient collective of every layout
// whose ranks share cores (planning/prediction.cpp), where it lies on the
// critical path: the step grows by exactly the wait, so the fit is closed
// form, max(0, measured - predicted without it) / parameters of a rank.
// A pipeline's (pp > 1) is its own: its stages' ranks meet at their dp
// collective after the drain, not all together, and share the cores with
// the other stages' (calibrate's dp C x pp 2 1F1B m4 run on the C cores;
// kStepEndWaitPipelineOp): the fit of a pipelined run stores that, and a
// pipeline is predicted with it where the calibration has it, else with
// the dp wait. On the 2-core VM dp2 x pp2 1F1B m8 was predicted 11-18 %
// slow in four benches with dp4's wait (14 ms of its 230), its exposed dp
// communication 7.9 % of the step against 4.4 % measured.
// Errors: a layout without dp, one whose ranks do not share cores under c,
// a measured step that is not a finite number > 0 (NaN included), and the
// prediction's own.
#pragma once

#include "common/result.h"
#include "engine/layout/layout.h"
#include "planning/calibration.h"

namespace bubblescope::layout {

struct StepEndWaitFit {
  double nsPerParameter = 0;
  double predictedWithoutNs = 0;  // the run's layout predicted without the wait
};

Result<StepEndWaitFit> fitStepEndWait(const Layout& run, const Calibration& c,
                                      double measuredStepNs);

// c with `nsPerParameter` stored as its step-end wait (a pipeline's with
// `pipeline`), replacing an earlier one.
Calibration withStepEndWait(Calibration c, double nsPerParameter, bool pipeline = false);

}  // namespace bubblescope::layout
