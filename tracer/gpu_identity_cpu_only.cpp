// currentGpuIdentity() (gpu_identity.h) of a build without CUDA.
#include "tracer/gpu_identity.h"

namespace bubblescope::tracer {

Result<GpuIdentity> currentGpuIdentity() {
  return Status::unsupported("a GPU's identity needs CUDA: this build has none");
}

}  // namespace bubblescope::tracer
