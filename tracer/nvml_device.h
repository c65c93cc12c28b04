// nvmlDeviceOf(): which NVML device a CUDA device is. CUDA numbers the GPUs
// a process sees (after CUDA_VISIBLE_DEVICES, in its order); NVML numbers
// every GPU of the machine. So `cuda:N` is NVML's device N only when nothing
// is hidden or reordered; the PCI bus id, or else the UUID, names one GPU
// for both. The index is never used.
//
// Contract:
// - normalisedPciBusId(): "domain:bus:device.function" in hex as CUDA
//   (cudaDeviceGetPCIBusId: "0000:3b:00.0") or NVML ("00000000:3B:00.0")
//   writes it -> NVML's form (8-digit domain, upper case); an error for
//   anything else.
// - nvmlUuidOf(): CUDA's 16 UUID bytes (cudaDeviceProp::uuid) as NVML
//   writes UUIDs ("GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", lower case).
// - nvmlDeviceOf(): the device NVML finds by the PCI bus id, else by the
//   UUID; an error naming both when neither finds it. The lookups are
//   NVML's (nvmlDeviceGetHandleByPciBusId_v2, nvmlDeviceGetHandleByUUID)
//   in NvmlSampler, fakes in tests. Plain code, built without CUDA or NVML.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>

#include "common/result.h"

namespace bubblescope::tracer {

// A CUDA device as CUDA names it (either field may be empty: unknown).
struct GpuIdentity {
  std::string pciBusId;  // cudaDeviceGetPCIBusId
  std::string uuid;      // nvmlUuidOf(cudaDeviceProp::uuid)
};

Result<std::string> normalisedPciBusId(const std::string& busId);

std::string nvmlUuidOf(const std::array<uint8_t, 16>& bytes);

using NvmlHandle = void*;
struct NvmlLookup {
  std::function<Result<NvmlHandle>(const std::string& pciBusId)> byPciBusId;
  std::function<Result<NvmlHandle>(const std::string& uuid)> byUuid;
};

Result<NvmlHandle> nvmlDeviceOf(const GpuIdentity& gpu, const NvmlLookup& lookup);

}  // namespace bubblescope::tracer
