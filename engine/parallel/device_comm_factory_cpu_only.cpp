// deviceCommFactoryFor() (device_groups.h) of a build without CUDA: no
// backend has device communicators.
#include "engine/parallel/device_groups.h"

namespace bubblescope::engine {

Result<DeviceCommFactory> deviceCommFactoryFor(Backend& backend) {
  return Status::unsupported("device communicators for " + backend.description() +
                             ": this build has no CUDA (configure with nvcc on the PATH)");
}

}  // namespace bubblescope::engine
