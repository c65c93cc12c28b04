#include "engine/backend_factory.h"

namespace bubblescope::engine {

Result<BackendChoice> chooseBackend(layout::Backend requested, const GpuProbe& probe,
                                    TrainingScope scope) {
  const bool wired =
      scope == TrainingScope::kSingleProcess ? kCudaSingleProcessWired : kCudaModelWired;
  switch (requested) {
    case layout::Backend::kCpu:
      return BackendChoice{Device::kHost, ""};
    case layout::Backend::kCuda:
      if (!probe.haveGpu()) {
        return Status::failedPrecondition("backend cuda needs a GPU but none is usable: " +
                                          probe.reason);
      }
      if (!wired) {
        return Status::unsupported("backend cuda: found " + probe.firstGpu +
                                   ", but parallel training on CUDA is not wired yet (only "
                                   "single-process train is); use cpu or auto");
      }
      return BackendChoice{Device::kCuda, "", probe.deviceCount};
    case layout::Backend::kAuto:
      if (!probe.haveGpu()) {
        return BackendChoice{Device::kHost, "backend auto: no usable GPU (" + probe.reason +
                                                "); running on the CPU"};
      }
      if (!wired) {
        return BackendChoice{Device::kHost, "backend auto: found " + probe.firstGpu +
                                                ", but parallel training on CUDA is not wired "
                                                "yet; running on the CPU"};
      }
      return BackendChoice{Device::kCuda, "", probe.deviceCount};
  }
  return Status::invalidArgument("unknown backend");
}

Status checkPrecision(Device device, layout::Precision precision) {
  if (precision == layout::Precision::kBf16 && device != Device::kCuda) {
    return Status::unsupported(
        "precision bf16 needs the cuda backend; the cpu backend computes in fp32");
  }
  return Status::ok();
}

Result<BackendChoice> chooseBackend(layout::Backend requested, TrainingScope scope) {
  if (requested == layout::Backend::kCpu) return chooseBackend(requested, GpuProbe{}, scope);
  return chooseBackend(requested, probeGpu(), scope);
}

}  // namespace bubblescope::engine
