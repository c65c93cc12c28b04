#include "tracer/stream_dims.h"

#include <string>

namespace bubblescope::tracer {

Result<StreamDims> streamDimsOf(std::span<const DeviceStream> streams, const StreamIdOf& idOf) {
  StreamDims dims;
  for (const DeviceStream& s : streams) {
    const std::string dimName(trace_model::toString(s.dim));
    auto id = idOf(s.stream);
    if (!id.isOk()) return id.status().withContext("the " + dimName + " group's stream");
    auto [it, added] = dims.emplace(*id, s.dim);
    if (!added && it->second != s.dim) {
      return Status::invalidArgument("GPU stream " + std::to_string(*id) + " is claimed by the " +
                                     std::string(trace_model::toString(it->second)) + " and the " +
                                     dimName +
                                     " groups: its NCCL kernels' dimension would be a guess");
    }
  }
  return dims;
}

}  // namespace bubblescope::tracer
