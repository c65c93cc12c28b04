#include "storage/analysis/last_step_cut.h"

#include <algorithm>

#include "trace_model/profiler_step.h"

namespace bubblescope::analysis {

LastStepCut::LastStepCut(bool includeLastStep,
                         std::optional<std::vector<trace_model::StepWindow>> profilerSteps)
    : includeLastStep_(includeLastStep), stepsFromEvents_(!profilerSteps) {
  if (profilerSteps) {
    for (const trace_model::StepWindow& w : *profilerSteps) addStep(w.startNs);
  }
}

void LastStepCut::addStep(int64_t startNs) {
  ++steps_;
  lastStepStartNs_ = std::max(lastStepStartNs_, startNs);
}

bool LastStepCut::step(const trace_model::Event& e) {
  if (!stepsFromEvents_ || !trace_model::isHostThreadLane(e.lane) ||
      !trace_model::profilerStepNumber(e.name)) {
    return false;
  }
  addStep(e.startNs);
  return true;
}

LastStepCut::Verdict LastStepCut::judge(std::optional<int64_t> launchNs,
                                        int64_t recordStartNs) const {
  if (includeLastStep_ || launchNs.value_or(recordStartNs) < lastStepStartNs_) {
    return Verdict::kKept;
  }
  // Every step is known: the record is past the cut. Else a later step may
  // still keep it.
  return stepsFromEvents_ ? Verdict::kPending : Verdict::kCut;
}

std::string coveredGpuRecords(bool launchCut, bool includeLastStep) {
  if (!launchCut) return "every GPU record (fewer than two ProfilerSteps: no launch cut)";
  return includeLastStep ? "the work launched in the trace, last ProfilerStep included"
                         : "the work launched before the last ProfilerStep";
}

}  // namespace bubblescope::analysis
