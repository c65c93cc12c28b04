#include "engine/backend_factory.h"

namespace bubblescope::engine {

Result<BackendChoice> chooseBackend(layout::Backend requested, const GpuProbe& probe) {
  switch (requested) {
    case layout::Backend::kCpu:
      return BackendChoice{Device::kHost, ""};
    case layout::Backend::kCuda:
      if (!probe.haveGpu()) {
        return Status::failedPrecondition("backend cuda needs a GPU but none is usable: " +
                                          probe.reason);
      }
      if (!kCudaModelWired) {
        return Status::unsupported("backend cuda: found " + probe.firstGpu +
                                   ", but the CUDA model path is not wired yet; use cpu or auto");
      }
      return BackendChoice{Device::kCuda, ""};
    case layout::Backend::kAuto:
      if (!probe.haveGpu()) {
        return BackendChoice{Device::kHost, "backend auto: no usable GPU (" + probe.reason +
                                                "); running on the CPU"};
      }
      if (!kCudaModelWired) {
        return BackendChoice{Device::kHost, "backend auto: found " + probe.firstGpu +
                                                ", but the CUDA model path is not wired yet; "
                                                "running on the CPU"};
      }
      return BackendChoice{Device::kCuda, ""};
  }
  return Status::invalidArgument("unknown backend");
}

Result<BackendChoice> chooseBackend(layout::Backend requested) {
  if (requested == layout::Backend::kCpu) return chooseBackend(requested, GpuProbe{});
  return chooseBackend(requested, probeGpu());
}

}  // namespace bubblescope::engine
