// startGpuCollector() (gpu_collector.h) of a build without CUDA.
#include "tracer/gpu_collector.h"

namespace bubblescope::tracer {

Result<std::unique_ptr<GpuActivitySource>> startGpuCollector() {
  return Status::unsupported("GPU activity needs CUPTI: this build has no CUDA");
}

}  // namespace bubblescope::tracer
