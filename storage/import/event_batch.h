// EventBatch: one rank's imported events on their way to a Sink, in batches
// of kBatchEvents, each shifted by the rank's time offset (the file's base
// time: Kineto's baseTimeNanoseconds, Nsight's session start), and the
// host-thread lane of each thread the trace names.
//
// Contract: the offset function is called once, at the first flush or
// offsetNs() (so it may wait for a scan that runs beside the parse); an
// event or step whose shifted times leave int64 is dropped and counted in
// dropped(). Memory: one batch. Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "common/result.h"
#include "trace_model/sink.h"

namespace bubblescope::import {

inline constexpr size_t kBatchEvents = 8192;

class EventBatch {
 public:
  EventBatch(trace_model::Sink& sink, std::function<int64_t()> timeOffsetNs);

  // Flushes when the batch is full.
  Status add(trace_model::Event event);
  Status flush();
  // Shifts the steps like the events and appends them.
  Status appendSteps(std::vector<trace_model::StepRecord> steps);
  int64_t offsetNs();
  int64_t dropped() const { return dropped_; }

  // The lane of host thread `tid`: the i-th thread seen is hostThreadLane(i).
  trace_model::Lane threadLane(int64_t tid);

 private:
  trace_model::Sink& sink_;
  std::function<int64_t()> timeOffsetNs_;
  std::optional<int64_t> offsetNs_;
  std::vector<trace_model::Event> batch_;
  std::map<int64_t, int32_t> threadIndex_;  // host tid -> lane index, in order seen
  int64_t dropped_ = 0;
};

}  // namespace bubblescope::import
