// replayIdealHardware(): a measured run as it would run with one core per
// rank (docs/prediction.md, "Ideal-hardware replay"): the run's own measured
// per-op costs, in thread CPU time (which ranks sharing a core do not
// stretch), replayed through the schedule simulator over the layout's op
// lists.
//
// Contract, per step after the first (every step when there is one): a
// compute op of stage k costs the largest CPU time of that op over the
// stage's ranks (tp and dp peers wait for each other), a backward with
// recompute adds its recompute; the optimizer likewise; a send costs the
// run's median pipeline receive transfer (wall); a gradient collective or
// parameter gather the smallest, over the stage's ranks, of the dp/zero
// communication time it stands for (the last rank to arrive waits least). An op not measured in a step costs
// the median of that op over the run. Bubble of stage k = its idle time /
// the replayed step, averaged over the steps.
#pragma once

#include <vector>

#include "common/result.h"
#include "storage/analysis/measured_ops.h"

namespace bubblescope::analysis {

struct IdealReplay {
  std::vector<double> bubble;  // per stage, mean over the replayed steps
  double stepNs = 0;           // mean replayed step time
  int32_t steps = 0;           // steps replayed
};

// Errors: no layout, no thread CPU times in the run (recorded before they
// were), an op list the simulator rejects.
Result<IdealReplay> replayIdealHardware(const MeasuredOps& measured);

}  // namespace bubblescope::analysis
