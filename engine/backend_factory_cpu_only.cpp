// The backend factory of a build without CUDA (BUBBLESCOPE_WITH_CUDA=OFF);
// engine/cuda/backend_factory_cuda.cpp is its CUDA twin.
#include <memory>

#include "engine/backend_factory.h"
#include "engine/cpu_backend.h"

namespace bubblescope::engine {

GpuProbe probeGpu() {
  GpuProbe probe;
  probe.reason = "this build has no CUDA support (BUBBLESCOPE_WITH_CUDA=OFF)";
  return probe;
}

Result<std::unique_ptr<Backend>> createBackend(Device device, int, layout::Precision precision) {
  BS_RETURN_IF_ERROR(checkPrecision(device, precision));
  if (device == Device::kCuda) {
    return Status::failedPrecondition(
        "the cuda backend is not in this build (BUBBLESCOPE_WITH_CUDA=OFF)");
  }
  return std::unique_ptr<Backend>(new CpuBackend());
}

}  // namespace bubblescope::engine
