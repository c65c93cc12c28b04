// Recorder: collects the spans of one rank.
//
// Contract: a Recorder belongs to one thread (the training thread); it is not
// thread-safe. With tracing disabled, record() and ScopedSpan cost a branch.
// Names passed to spans must outlive the Recorder (string literals or strings
// owned by the model); they are copied only when drained.
// The tracer issue replaces the buffer with per-thread buffers shipped to
// rank 0; the span API below stays.
#pragma once

#include <cstdint>
#include <vector>

#include "tracer/clock.h"
#include "tracer/event.h"

namespace bubblescope::tracer {

// What a span is about; everything but the times.
struct SpanInfo {
  EventKind kind = EventKind::kOther;
  Lane lane = Lane::kCompute;
  const char* name = "";
  int32_t step = -1;
  int32_t microBatch = -1;
  int32_t stage = -1;
  int32_t chunk = -1;
  ParallelDim dim = ParallelDim::kNone;
  int64_t bytes = 0;
  int64_t flops = 0;
  int32_t peer = -1;
};

class Recorder {
 public:
  Recorder(int32_t rank, bool enabled) : rank_(rank), enabled_(enabled) {
    if (enabled_) spans_.reserve(1 << 14);
  }

  bool enabled() const { return enabled_; }
  int32_t rank() const { return rank_; }

  void record(const SpanInfo& info, int64_t startNs, int64_t endNs) {
    if (!enabled_) return;
    spans_.push_back({info, startNs, endNs});
  }

  // Moves the recorded spans out as Events (host clock, not yet aligned).
  std::vector<Event> drain();
  size_t pending() const { return spans_.size(); }

 private:
  struct RawSpan {
    SpanInfo info;
    int64_t startNs;
    int64_t endNs;
  };
  int32_t rank_;
  bool enabled_;
  std::vector<RawSpan> spans_;
};

// Records [construction, destruction) as one span. A null recorder is allowed.
class ScopedSpan {
 public:
  ScopedSpan(Recorder* recorder, const SpanInfo& info)
      : recorder_(recorder != nullptr && recorder->enabled() ? recorder : nullptr), info_(info) {
    if (recorder_) startNs_ = hostNowNs();
  }
  ~ScopedSpan() {
    if (recorder_) recorder_->record(info_, startNs_, hostNowNs());
  }
  ScopedSpan(const ScopedSpan&) = delete;
  ScopedSpan& operator=(const ScopedSpan&) = delete;

 private:
  Recorder* recorder_;
  SpanInfo info_;
  int64_t startNs_ = 0;
};

}  // namespace bubblescope::tracer
