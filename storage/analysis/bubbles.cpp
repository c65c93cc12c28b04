#include "storage/analysis/bubbles.h"

#include "storage/analysis/gpu_time_analyzer.h"

namespace bubblescope::analysis {

bool isBusy(trace_model::EventKind kind) {
  const trace_model::EventCategory c = trace_model::categoryOf(kind);
  return c == trace_model::EventCategory::kCompute ||
         c == trace_model::EventCategory::kCommunication;
}

bool isBusy(trace_model::Lane lane, trace_model::EventKind kind) {
  return trace_model::isGpuStreamLane(lane) ? isCountedGpuRecord(lane, kind) : isBusy(kind);
}

trace_model::IntervalSet bubbleIntervals(const trace_model::StepWindow& window,
                                         const trace_model::IntervalSet& busy) {
  const auto step = trace_model::IntervalSet::fromUnsorted({{window.startNs, window.endNs}});
  return step.subtract(busy);
}

}  // namespace bubblescope::analysis
