// deviceCommFactoryFor() (engine/parallel/device_groups.h) of the CUDA
// build: a CudaBackend's groups through makeDeviceCommunicator().
#include "engine/cuda/cuda_backend.h"
#include "engine/cuda/nccl_communicator.h"
#include "engine/parallel/device_groups.h"

namespace bubblescope::engine {

Result<DeviceCommFactory> deviceCommFactoryFor(Backend& backend) {
  auto* gpu = dynamic_cast<cuda::CudaBackend*>(&backend);
  if (gpu == nullptr) {
    return Status::invalidArgument("device communicators need a CUDA backend, not " +
                                   backend.description());
  }
  const cudaStream_t compute = gpu->stream();
  return DeviceCommFactory(
      [compute](std::unique_ptr<MpiCommunicator> group, bool pointToPoint, bool hostStaged) {
        return makeDeviceCommunicator(std::move(group), compute, pointToPoint, hostStaged);
      });
}

}  // namespace bubblescope::engine
