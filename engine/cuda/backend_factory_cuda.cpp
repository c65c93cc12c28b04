// The backend factory of a build with CUDA; engine/backend_factory_cpu_only.cpp
// is its twin without.
#include <cuda_runtime_api.h>

#include <memory>

#include "engine/backend_factory.h"
#include "engine/cpu_backend.h"
#include "engine/cuda/cuda_backend.h"
#include "engine/cuda/cuda_context.h"

namespace bubblescope::engine {

GpuProbe probeGpu() {
  GpuProbe probe;
  probe.cudaBuilt = true;
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();
    probe.reason =
        std::string("CUDA says: ") + cudaGetErrorString(rc) + " (" + cudaGetErrorName(rc) + ")";
    return probe;
  }
  if (count <= 0) {
    probe.reason = "CUDA finds no device";
    return probe;
  }
  probe.deviceCount = count;
  auto what = cuda::deviceDescription(0);
  probe.firstGpu = what.isOk() ? *what : "GPU 0";
  return probe;
}

Result<std::unique_ptr<Backend>> createBackend(Device device, int gpuIndex,
                                               layout::Precision precision) {
  BS_RETURN_IF_ERROR(checkPrecision(device, precision));
  if (device == Device::kCuda) {
    BS_ASSIGN_OR_RETURN(auto backend,
                        cuda::CudaBackend::create(gpuIndex, precision == layout::Precision::kBf16
                                                                ? cuda::MatmulPrecision::kBf16
                                                                : cuda::MatmulPrecision::kFp32));
    return std::unique_ptr<Backend>(std::move(backend));
  }
  return std::unique_ptr<Backend>(new CpuBackend());
}

}  // namespace bubblescope::engine
