// GpuEventCollector: a rank's GPU activity as trace events, batch by batch:
// the launches its source saw (on the host clock already) and its GPU
// records mapped onto the host clock through a GpuClockMap refitted on every
// batch from the first clock pairs (a long baseline for the rate) and the
// latest ones, each record's NCCL kernel tagged with its stream's dimension
// (StreamDims, stream_dims.h). A launch and its record may land in different
// batches: readers link them by correlation id (gpu_activity.h).
//
// Used by TraceSession (MPI ranks) and by single-process `train --trace`.
// Contract: one thread calls collect() (the one that ships the batches);
// the source outlives the collector. Errors are values: a clock map that
// cannot be fitted fails the batch's GPU records, the launches still come.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "trace_model/event.h"
#include "tracer/gpu_activity.h"

namespace bubblescope::tracer {

class GpuEventCollector {
 public:
  GpuEventCollector(GpuActivitySource& source, int32_t rank) : source_(source), rank_(rank) {}

  // Appends to `out` what the source completed since the previous call.
  Status collect(const StreamDims& dims, std::vector<trace_model::Event>& out);

 private:
  GpuActivitySource& source_;
  int32_t rank_;
  std::vector<ClockPair> pairs_;
};

}  // namespace bubblescope::tracer
