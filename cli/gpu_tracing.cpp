#include "cli/gpu_tracing.h"

#include <cstdio>
#include <vector>

#include "tracer/gpu_collector.h"
#include "tracer/stream_dims.h"

namespace bubblescope::cli {

bool tracesGpuActivity(std::string_view placement) {
  constexpr std::string_view kCuda = "cuda:";
  if (!placement.starts_with(kCuda) || placement.size() == kCuda.size()) return false;
  for (char c : placement.substr(kCuda.size())) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::unique_ptr<tracer::GpuActivitySource> startGpuActivity(std::string_view placement, int rank) {
  if (!tracesGpuActivity(placement)) return nullptr;
  auto gpu = tracer::startGpuCollector();
  if (gpu.isOk()) return std::move(gpu).value();
  std::fprintf(stderr, "note: rank %d: no GPU activity in the trace: %s\n", rank,
               gpu.status().message().c_str());
  return nullptr;
}

Result<tracer::StreamDims> deviceStreamDims(const engine::DeviceGroups& groups,
                                            tracer::GpuActivitySource& source,
                                            trace_model::ParallelDim dataParallel) {
  std::vector<tracer::DeviceStream> streams;
  for (const engine::Communicator* c : groups.all()) {
    const trace_model::ParallelDim dim =
        c->dim() == trace_model::ParallelDim::kDp ? dataParallel : c->dim();
    for (const void* s : c->deviceStreams()) streams.push_back({s, dim});
  }
  return tracer::streamDimsOf(streams, [&source](const void* s) { return source.streamIdOf(s); });
}

}  // namespace bubblescope::cli
