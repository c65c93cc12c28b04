#include "storage/analysis/bubbles.h"

namespace bubblescope::analysis {

bool isBusy(trace_model::EventKind kind) {
  const trace_model::EventCategory c = trace_model::categoryOf(kind);
  return c == trace_model::EventCategory::kCompute ||
         c == trace_model::EventCategory::kCommunication;
}

trace_model::IntervalSet bubbleIntervals(const trace_model::StepWindow& window,
                                         const trace_model::IntervalSet& busy) {
  const auto step = trace_model::IntervalSet::fromUnsorted({{window.startNs, window.endNs}});
  return step.subtract(busy);
}

}  // namespace bubblescope::analysis
