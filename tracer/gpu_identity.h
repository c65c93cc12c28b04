// currentGpuIdentity(): the PCI bus id and UUID of the calling thread's
// current CUDA device, by which NVML finds the same GPU (nvml_device.h)
// whatever CUDA_VISIBLE_DEVICES hides or reorders. In a build with CUDA it
// asks the runtime (cudaDeviceGetPCIBusId, cudaGetDeviceProperties); in a
// build without, an error saying so.
//
// Contract: call it after the rank's device is current (as the collector,
// gpu_collector.h). Errors are values: no GPU, no CUDA in this build.
#pragma once

#include "common/result.h"
#include "tracer/nvml_device.h"

namespace bubblescope::tracer {

Result<GpuIdentity> currentGpuIdentity();

}  // namespace bubblescope::tracer
