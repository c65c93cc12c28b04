#include "planning/step_end_wait_fit.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "planning/core_sharing.h"
#include "planning/formulas.h"
#include "planning/link_class.h"
#include "planning/prediction.h"

namespace bubblescope::layout {

Calibration withStepEndWait(Calibration c, double nsPerParameter, bool pipeline) {
  return withSingleEntry(std::move(c), kSharedCoresPart,
                         pipeline ? kStepEndWaitPipelineOp : kStepEndWaitOp, nsPerParameter);
}

Result<StepEndWaitFit> fitStepEndWait(const Layout& l, const Calibration& c,
                                      double measuredStepNs) {
  if (l.dp < 2) return Status::invalidArgument("fitting the step-end wait: the layout has no dp");
  if (!(measuredStepNs > 0) || !std::isfinite(measuredStepNs)) {
    return Status::invalidArgument("fitting the step-end wait: the measured step (" +
                                   std::to_string(measuredStepNs) +
                                   " ns) is not a finite number > 0");
  }
  const CoreSharing sharing = coreSharingOf(placedHosts(l), c, 0.0, l.tp);
  if (!sharing.shared() || c.oversubscribed()) {
    return Status::invalidArgument(
        "fitting the step-end wait: the layout's ranks do not share cores under this "
        "calibration");
  }
  StepEndWaitFit fit;
  const bool pipeline = l.pp > 1;
  BS_ASSIGN_OR_RETURN(const Prediction p,
                      predictLayout(l, withStepEndWait(c, 0.0, pipeline)));
  fit.predictedWithoutNs = p.stepNs;
  const double parameters = parametersPerRank(l);
  if (!(parameters > 0)) {
    return Status::invalidArgument("fitting the step-end wait: the layout has no parameters");
  }
  fit.nsPerParameter = std::max(0.0, measuredStepNs - p.stepNs) / parameters;
  return fit;
}

}  // namespace bubblescope::layout
