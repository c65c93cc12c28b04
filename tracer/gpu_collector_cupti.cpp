// startGpuCollector() (gpu_collector.h) of a build with CUDA: the CUPTI collector.
#include "tracer/cupti_collector.h"
#include "tracer/gpu_collector.h"

namespace bubblescope::tracer {

Result<std::unique_ptr<GpuActivitySource>> startGpuCollector() {
  BS_ASSIGN_OR_RETURN(auto collector, CuptiCollector::start());
  return std::unique_ptr<GpuActivitySource>(std::move(collector));
}

}  // namespace bubblescope::tracer
