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
// communication time it stands for (the last rank to arrive waits least). An op not measured in a
// step costs the median of that op over the run. Bubble of stage k = its idle time / the replayed
// step, averaged over the steps.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "planning/simulator.h"
#include "storage/analysis/measured_ops.h"
#include "storage/trace_writer.h"

namespace bubblescope::analysis {

struct IdealReplay {
  std::vector<double> bubble;  // per stage, mean over the replayed steps
  double stepNs = 0;           // mean replayed step time
  int32_t steps = 0;           // steps replayed
  int32_t firstStep = 0;       // the measured step the first replayed one is
  // The per-op costs simulated, one OpCosts ([stage][op], ns) per replayed
  // step, and the pipeline transfer they assume (ns).
  std::vector<layout::OpCosts> stepOpCostsNs;
  double p2pNs = 0;
};

// Errors: no layout, no thread CPU times in the run (recorded before they
// were), an op list the simulator rejects.
Result<IdealReplay> replayIdealHardware(const MeasuredOps& measured);

// Writes `replay` of `measured` as a simulated run into `writer`
// (storage::writeSimulatedRun with its per-step costs; steps numbered as the
// measured ones they replay), so the app draws it as a timeline like any
// run. Its step windows are the replayed makespans, so each stage's
// analysed bubble is the replay's. Returns the new run's id.
Result<int64_t> writeReplayedRun(storage::TraceWriter& writer, const MeasuredOps& measured,
                                 const IdealReplay& replay, const std::string& name);

}  // namespace bubblescope::analysis
