#include "storage/analysis/gpu_kernel_analyzer.h"

#include "trace_model/kernel_type.h"

namespace bubblescope::analysis {

void GpuKernelAnalyzer::add(const trace_model::Event& e) {
  if (e.lane == trace_model::Lane::kCudaApi) {
    if (e.correlationId != 0) {
      launches_.add({e.correlationId, e.startNs, e.endNs, isHtaLaunchCall(e.name)});
    }
    return;
  }
  if (!trace_model::isGpuStreamLane(e.lane) || e.kind == trace_model::EventKind::kOther) return;
  const LaunchCall* launch = e.correlationId != 0 ? launches_.find(e.correlationId) : nullptr;
  if (launchCut_ && e.correlationId != 0 && launch == nullptr) {
    ++launchedBeforeProfile_;
    return;
  }
  ++records_;
  breakdown_.add(e.name, trace_model::kernelTypeOf(e.kind, e.name), e.startNs, e.endNs, e.lane);
  if (launch != nullptr && launch->htaLaunch) launchStats_.add(*launch, e.startNs, e.endNs);
  copies_.add(e);
}

std::optional<GpuKernels> GpuKernelAnalyzer::finish() {
  if (records_ == 0) return std::nullopt;
  GpuKernels k;
  k.breakdown = breakdown_.finish();
  k.launches = launchStats_.finish();
  k.copies = copies_.finish();
  k.records = records_;
  k.launchedBeforeProfile = launchedBeforeProfile_;
  return k;
}

}  // namespace bubblescope::analysis
