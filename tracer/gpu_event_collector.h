// GpuEventCollector: a rank's GPU activity as trace events, batch by batch:
// the launches its source saw (on the host clock already) and its GPU
// records mapped onto the host clock through a GpuClockMap refitted on every
// batch from the first clock pairs (a long baseline for the rate) and the
// latest ones, each record's NCCL kernel tagged with its stream's dimension
// (StreamDims, stream_dims.h). A launch and its record may land in different
// batches: readers link them by correlation id (gpu_activity.h).
//
// The maps' error bound is kept (clockUncertaintyNs()) and stored with the
// rank (trace_model::RankInfo::gpuClockUncertaintyNs).
//
// Used by TraceSession (MPI ranks) and by single-process `train --trace`.
// Contract: one thread calls collect() (the one that ships the batches);
// the source outlives the collector and gives clock pairs to its
// constructor too (on the constructing thread, before that one starts). Errors are values: a clock
// map that cannot be fitted fails the batch's GPU records, the launches still come.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "common/status.h"
#include "trace_model/event.h"
#include "tracer/gpu_activity.h"

namespace bubblescope::tracer {

class GpuEventCollector {
 public:
  // Reads the first clock pairs now, before the GPU work it will convert
  // (the caller makes it before training), so every record lies between
  // pairs: the maps interpolate over a baseline as long as the run, and
  // their error bound holds for every record (gpu_activity.h).
  GpuEventCollector(GpuActivitySource& source, int32_t rank)
      : source_(source), rank_(rank), pairs_(source.clockPairs(4)) {}

  // Appends to `out` what the source completed since the previous call.
  Status collect(const StreamDims& dims, std::vector<trace_model::Event>& out);
  // The largest error bound (GpuClockMap::errorBoundNs) of every map its
  // records were converted with: a bound on the error of each GPU time
  // stored, on this rank's host clock; -1 before any record was converted.
  // Any thread.
  int64_t clockUncertaintyNs() const { return uncertaintyNs_.load(); }

 private:
  GpuActivitySource& source_;
  int32_t rank_;
  std::vector<ClockPair> pairs_;
  std::atomic<int64_t> uncertaintyNs_{-1};
};

}  // namespace bubblescope::tracer
