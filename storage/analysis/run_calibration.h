// calibrateFromRun(): a cost model (layout::Calibration) extracted from one
// measured run of a trace file (docs/prediction.md, "Calibration").
//
// Contract: steps after the first are used when the run has more than one
// (the first pays for allocation and warm caches), and of those the typical
// ones (measured_ops.h, typicalSteps: a hiccup of the machine is left out).
// Per layer slot and op the
// mean over every (rank, step, micro-batch, layer) sample of its wall and
// thread-CPU time (a step is a sum of op times: the mean keeps the waits for
// a core that a contended machine adds to some of them, which a median
// drops); the optimizer's mean per parameter updated (Ψ_rank,
// /dp under ZeRO >= 1); per dimension and collective an alpha-beta fit
// (layout::fitAlphaBeta) over the distinct message sizes, each size's time
// the lower quartile of its samples (a collective's wall time includes
// waiting for the last peer; the earliest finishers measure the transfer),
// the p2p time the median receive transfer (the wait is its own span); each
// fit per link class, a sample's link its rank's group's of that dimension
// (same_host / other_host, planning/link_class.h); per link a blocked
// pipeline receive's wake-up (layout::kReceiveWake), the mean of the run's
// hops (pipeline_hops.h) less the p2p fit's transfer of their bytes, at
// least 0.
// Errors: a run that is not measured, has no layout, or no compute spans.
#pragma once

#include <cstdint>

#include "common/result.h"
#include "planning/calibration.h"
#include "storage/analysis/measured_ops.h"
#include "storage/trace_reader.h"

namespace bubblescope::analysis {

Result<layout::Calibration> calibrateFromRun(storage::TraceReader& reader, int64_t runId);

// The same from already measured ops of run `runId`.
Result<layout::Calibration> calibrationOf(const MeasuredOps& measured, int64_t runId);

}  // namespace bubblescope::analysis
