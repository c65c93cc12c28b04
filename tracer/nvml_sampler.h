// NvmlSampler: GPU utilisation and memory from NVML, loaded at run time
// (dlopen of libnvidia-ml.so.1), so no build or link depends on the driver.
//
// Contract: open() finds the CUDA device `gpu` in NVML by its PCI bus id or
// UUID (nvml_device.h), never by CUDA's index, which NVML reads as a
// physical one (they differ under CUDA_VISIBLE_DEVICES). It fails with one
// message when the library or the device is not there; the tracer then
// simply has no GPU samples. Not thread-safe.
#pragma once

#include <memory>
#include <vector>

#include "common/result.h"
#include "trace_model/event.h"
#include "tracer/nvml_device.h"

namespace bubblescope::tracer {

class NvmlSampler {
 public:
  static Result<std::unique_ptr<NvmlSampler>> open(const GpuIdentity& gpu);
  ~NvmlSampler();
  NvmlSampler(const NvmlSampler&) = delete;
  NvmlSampler& operator=(const NvmlSampler&) = delete;

  // "gpu_util" (0..1), "gpu_mem_util" (0..1), "gpu_mem_used_bytes".
  std::vector<trace_model::Sample> sample(int32_t rank, int64_t nowNs);

 private:
  struct Api;
  explicit NvmlSampler(std::unique_ptr<Api> api);
  std::unique_ptr<Api> api_;
};

}  // namespace bubblescope::tracer
