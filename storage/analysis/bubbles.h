// Bubbles, defined once (docs/design.md, "Metrics"): the parts of a rank's step in
// which it neither computes nor communicates. Wait spans (blocked on a pipeline
// peer) and time covered by no span at all are both bubble; a stage's pipeline
// bubble is |bubble| / step time. The report (RankStepAnalyzer) and the
// timeline's hatching both take their bubbles from here.
#pragma once

#include "trace_model/event.h"
#include "trace_model/interval_set.h"
#include "trace_model/step_window.h"

namespace bubblescope::analysis {

// True for the kinds whose spans keep a rank busy: compute and communication.
bool isBusy(trace_model::EventKind kind);
// Whether a span of `kind` on `lane` keeps its rank busy: on a GPU stream,
// what the GPU time analysis counts busy (isCountedGpuRecord,
// gpu_time_analyzer.h: kernels, collectives, memcpy and memset, as HTA);
// on any other lane isBusy(kind).
bool isBusy(trace_model::Lane lane, trace_model::EventKind kind);

// window \ busy: the bubble of one rank's step, given the union of its busy
// spans (any extent; only the part inside the window matters).
trace_model::IntervalSet bubbleIntervals(const trace_model::StepWindow& window,
                                         const trace_model::IntervalSet& busy);

}  // namespace bubblescope::analysis
