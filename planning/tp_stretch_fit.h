// fitTpStretchPaid(): the share of the time-sharing stretch a tp group's
// compute pays among ranks that share cores (CoreSharing::paid,
// core_sharing.h; docs/prediction.md, "More ranks than cores"), from one
// measured run of such a layout (calibrate's tp 2 x dp C run on C cores,
// cli/calibrate_benchmark.h).
//
// Contract: the prediction of a tp layout on shared cores rises with the
// share (its compute's stretch is 1 + (s - 1) · share, its all-reduces take
// the shared-cores tp fit either way). The share fitted is the one at which
// c's prediction of the run's own layout meets the run's measured step,
// found by bisection on [0, 1] to within 1e-4; a run at least as slow as
// the prediction at 1 gives 1 (the plain time-sharing model), one at least
// as fast as the prediction at 0 gives 0. The two bounding predictions are
// returned so the caller can say how far the run sat from them.
// Errors: a layout without tp, one whose ranks do not share cores under c
// (or c without a shared-cores tp fit), a measured step that is not a
// finite number > 0 (NaN included), and the prediction's own.
#pragma once

#include "common/result.h"
#include "engine/layout/layout.h"
#include "planning/calibration.h"

namespace bubblescope::layout {

struct TpStretchFit {
  double paid = 1;
  double predictedAtZeroNs = 0;  // the run's layout predicted with the share 0
  double predictedAtOneNs = 0;   // ... and with 1
};

Result<TpStretchFit> fitTpStretchPaid(const Layout& run, const Calibration& c,
                                      double measuredStepNs);

// c with `paid` stored as its tp share (part kSharedCoresPart, op
// kTpStretchPaidOp, the share in both cost columns), replacing an earlier one.
Calibration withTpStretchPaid(Calibration c, double paid);

}  // namespace bubblescope::layout
