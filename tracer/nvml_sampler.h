// NvmlSampler: GPU utilisation and memory from NVML, loaded at run time
// (dlopen of libnvidia-ml.so.1), so no build or link depends on the driver.
//
// Contract: open() fails with one message when the library or the device is
// not there; the tracer then simply has no GPU samples. Not thread-safe.
#pragma once

#include <memory>
#include <vector>

#include "common/result.h"
#include "trace_model/event.h"

namespace bubblescope::tracer {

class NvmlSampler {
 public:
  static Result<std::unique_ptr<NvmlSampler>> open(int deviceIndex);
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
