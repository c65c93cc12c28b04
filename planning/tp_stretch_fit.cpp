#include "planning/tp_stretch_fit.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "planning/core_sharing.h"
#include "planning/prediction.h"

namespace bubblescope::layout {
namespace {

Result<double> predictedStepNs(const Layout& l, const Calibration& c, double paid) {
  BS_ASSIGN_OR_RETURN(const Prediction p, predictLayout(l, withTpStretchPaid(c, paid)));
  return p.stepNs;
}

}  // namespace

Calibration withTpStretchPaid(Calibration c, double paid) {
  return withSingleEntry(std::move(c), kSharedCoresPart, kTpStretchPaidOp, paid);
}

Result<TpStretchFit> fitTpStretchPaid(const Layout& l, const Calibration& c,
                                      double measuredStepNs) {
  if (l.tp < 2) return Status::invalidArgument("fitting a tp group's share: the layout has no tp");
  if (!(measuredStepNs > 0) || !std::isfinite(measuredStepNs)) {
    return Status::invalidArgument("fitting a tp group's share: the measured step (" +
                                   std::to_string(measuredStepNs) +
                                   " ns) is not a finite number > 0");
  }
  TpStretchFit fit;
  BS_ASSIGN_OR_RETURN(fit.predictedAtZeroNs, predictedStepNs(l, c, 0.0));
  BS_ASSIGN_OR_RETURN(fit.predictedAtOneNs, predictedStepNs(l, c, 1.0));
  if (!(fit.predictedAtOneNs > fit.predictedAtZeroNs)) {
    return Status::invalidArgument(
        "fitting a tp group's share: its ranks do not share cores under this calibration (or "
        "it has no tp all-reduce measured between ranks that do), so the share changes nothing");
  }
  if (measuredStepNs >= fit.predictedAtOneNs) {
    fit.paid = 1;
    return fit;
  }
  if (measuredStepNs <= fit.predictedAtZeroNs) {
    fit.paid = 0;
    return fit;
  }
  double lo = 0, hi = 1;
  while (hi - lo > 1e-4) {
    const double mid = 0.5 * (lo + hi);
    BS_ASSIGN_OR_RETURN(const double ns, predictedStepNs(l, c, mid));
    (ns < measuredStepNs ? lo : hi) = mid;
  }
  fit.paid = 0.5 * (lo + hi);
  return fit;
}

}  // namespace bubblescope::layout
