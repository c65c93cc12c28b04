// currentGpuIdentity() (gpu_identity.h) of a build with CUDA.
#include <cuda_runtime_api.h>

#include <array>
#include <cstring>
#include <string>

#include "tracer/gpu_identity.h"

namespace bubblescope::tracer {

Result<GpuIdentity> currentGpuIdentity() {
  int device = 0;
  if (cudaError_t rc = cudaGetDevice(&device); rc != cudaSuccess) {
    return Status::unsupported(std::string("no current CUDA device: ") + cudaGetErrorString(rc));
  }
  GpuIdentity id;
  char busId[32] = {};
  if (cudaDeviceGetPCIBusId(busId, sizeof busId, device) == cudaSuccess) id.pciBusId = busId;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) == cudaSuccess) {
    std::array<uint8_t, 16> bytes{};
    std::memcpy(bytes.data(), prop.uuid.bytes, bytes.size());
    id.uuid = nvmlUuidOf(bytes);
  }
  if (id.pciBusId.empty() && id.uuid.empty()) {
    return Status::unsupported("CUDA device " + std::to_string(device) +
                               " gives neither a PCI bus id nor a UUID");
  }
  return id;
}

}  // namespace bubblescope::tracer
