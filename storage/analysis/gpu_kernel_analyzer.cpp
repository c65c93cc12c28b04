#include "storage/analysis/gpu_kernel_analyzer.h"

#include <utility>

#include "storage/analysis/gpu_time_analyzer.h"
#include "trace_model/kernel_type.h"

namespace bubblescope::analysis {

void GpuKernelAnalyzer::Tables::add(const trace_model::Event& e, const LaunchCall* launch) {
  ++records;
  breakdown.add(e.name, trace_model::kernelTypeOf(e.kind, e.name), e.startNs, e.endNs, e.lane);
  if (launch != nullptr && launch->htaLaunch) launchStats.add(*launch, e.startNs, e.endNs);
  copies.add(e);
}

void GpuKernelAnalyzer::Tables::merge(Tables&& later) {
  breakdown.merge(std::move(later.breakdown));
  launchStats.merge(std::move(later.launchStats));
  copies.merge(later.copies);
  records += later.records;
  later = Tables{};
}

GpuKernelAnalyzer::GpuKernelAnalyzer(
    bool launchCut, bool includeLastStep,
    std::optional<std::vector<trace_model::StepWindow>> profilerSteps)
    : launchCut_(launchCut),
      includeLastStep_(includeLastStep),
      cut_(includeLastStep, std::move(profilerSteps)) {}

void GpuKernelAnalyzer::add(const trace_model::Event& e) {
  if (e.lane == trace_model::Lane::kCudaApi) {
    if (e.correlationId != 0) {
      launches_.add({e.correlationId, e.startNs, e.endNs, isHtaLaunchCall(e.name)});
    }
    return;
  }
  // A step begins after every record held so far, and so after their launches.
  if (cut_.step(e) && pending_.records > 0) counted_.merge(std::move(pending_));
  if (!isCountedGpuRecord(e.lane, e.kind)) return;
  const LaunchCall* launch = e.correlationId != 0 ? launches_.find(e.correlationId) : nullptr;
  if (!launchCut_) {
    counted_.add(e, launch);
    return;
  }
  if (e.correlationId != 0 && launch == nullptr) {
    ++launchedBeforeProfile_;
    return;
  }
  const std::optional<int64_t> launchNs =
      launch != nullptr ? std::optional<int64_t>(launch->startNs) : std::nullopt;
  switch (cut_.judge(launchNs, e.startNs)) {
    case LastStepCut::Verdict::kKept:
      counted_.add(e, launch);
      break;
    case LastStepCut::Verdict::kPending:
      pending_.add(e, launch);
      break;
    case LastStepCut::Verdict::kCut:
      ++cutRecords_;
      break;
  }
}

std::optional<GpuKernels> GpuKernelAnalyzer::finish() {
  if (counted_.records == 0) return std::nullopt;
  GpuKernels k;
  k.breakdown = counted_.breakdown.finish();
  k.launches = counted_.launchStats.finish();
  k.copies = counted_.copies.finish();
  k.records = counted_.records;
  k.launchedBeforeProfile = launchedBeforeProfile_;
  // What is still pending was launched in the last step.
  k.afterLastStep = cutRecords_ + pending_.records;
  k.launchCut = launchCut_;
  k.includeLastStep = includeLastStep_;
  return k;
}

}  // namespace bubblescope::analysis
