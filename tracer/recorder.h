// Recorder: collects the spans of one thread of one rank.
//
// Contract:
// - One producer thread calls record(), begin()/end() and ScopedSpan; one
//   consumer (the same thread, or the tracer's shipping thread) calls
//   drainInto(). The two may run concurrently: the buffer is a fixed
//   single-producer single-consumer ring, so recording never allocates and
//   never locks. When the ring is full a span is dropped and counted.
// - With tracing disabled, recording costs one branch.
// - SpanInfo::name must outlive the Recorder's pending spans (a string
//   literal, or a string owned by the model); it is copied when drained.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "trace_model/event.h"
#include "tracer/clock.h"

namespace bubblescope::tracer {

// What a span is about; everything but the times: its name and the Event
// attributes that the list in trace_model/event.h marks `span` (kind, lane,
// step, micro-batch, stage, chunk, dim, bytes, flops, peer), with Event's
// names, types and initial values.
struct SpanInfo {
  const char* name = "";
#define BUBBLESCOPE_SPAN_MEMBER(Type, member, initial, column, since, bit, span) \
  BUBBLESCOPE_IF_##span(Type member = initial;)
  BUBBLESCOPE_EVENT_FIELDS(BUBBLESCOPE_EVENT_SKIP, BUBBLESCOPE_SPAN_MEMBER)
#undef BUBBLESCOPE_SPAN_MEMBER
  // ScopedSpan also measures the thread's CPU time (Event::cpuNs); set for
  // compute spans, whose cost the calibration and the replay read.
  bool threadCpu = false;
};

// A deliberate error in a rank's clock, for tests of the clock alignment:
// skewed(t) = t + offsetNs + drift * (t - pivotNs).
struct ClockSkew {
  int64_t offsetNs = 0;
  double drift = 0.0;
  int64_t pivotNs = 0;
  int64_t apply(int64_t t) const {
    return t + offsetNs + static_cast<int64_t>(drift * static_cast<double>(t - pivotNs));
  }
};

// A span between begin() and end().
struct OpenSpan {
  SpanInfo info;
  int64_t startNs = 0;
};

class Recorder {
 public:
  static constexpr size_t kDefaultCapacity = size_t{1} << 15;

  // `capacity` is rounded up to a power of two.
  Recorder(int32_t rank, bool enabled, size_t capacity = kDefaultCapacity);
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  bool enabled() const { return enabled_; }
  int32_t rank() const { return rank_; }

  // This rank's host clock (skewed when a test asked for it).
  int64_t now() const { return skewed_ ? skew_.apply(hostNowNs()) : hostNowNs(); }
  void setClockSkewForTesting(const ClockSkew& skew) {
    skew_ = skew;
    skewed_ = true;
  }

  // Producer side.
  // `cpuNs`: the thread CPU time spent in the span, -1 when not measured.
  void record(const SpanInfo& info, int64_t startNs, int64_t endNs, int64_t cpuNs = -1) {
    if (!enabled_) return;
    const uint64_t head = head_.load(std::memory_order_relaxed);
    if (head - tail_.load(std::memory_order_acquire) == capacity_) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    slots_[head & (capacity_ - 1)] = {info, startNs, endNs, cpuNs};
    head_.store(head + 1, std::memory_order_release);
  }
  OpenSpan begin(const SpanInfo& info) const { return {info, enabled_ ? now() : 0}; }
  void end(const OpenSpan& span) {
    if (enabled_) record(span.info, span.startNs, now());
  }

  // Consumer side: appends the pending spans as Events (this rank's host
  // clock, not yet aligned) and returns how many.
  size_t drainInto(std::vector<trace_model::Event>& out);
  std::vector<trace_model::Event> drain() {
    std::vector<trace_model::Event> out;
    drainInto(out);
    return out;
  }

  size_t pending() const {
    return static_cast<size_t>(head_.load(std::memory_order_acquire) -
                               tail_.load(std::memory_order_relaxed));
  }
  int64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

 private:
  struct RawSpan {
    SpanInfo info;
    int64_t startNs;
    int64_t endNs;
    int64_t cpuNs;
  };
  int32_t rank_;
  bool enabled_;
  bool skewed_ = false;
  ClockSkew skew_;
  uint64_t capacity_;
  std::unique_ptr<RawSpan[]> slots_;
  alignas(64) std::atomic<uint64_t> head_{0};  // written by the producer
  alignas(64) std::atomic<uint64_t> tail_{0};  // written by the consumer
  std::atomic<int64_t> dropped_{0};
};

// Records [construction, destruction) as one span. A null recorder is allowed.
class ScopedSpan {
 public:
  ScopedSpan(Recorder* recorder, const SpanInfo& info)
      : recorder_(recorder != nullptr && recorder->enabled() ? recorder : nullptr), info_(info) {
    if (recorder_) {
      if (info_.threadCpu) startCpuNs_ = threadCpuNowNs();
      startNs_ = recorder_->now();
    }
  }
  ~ScopedSpan() {
    if (!recorder_) return;
    const int64_t endNs = recorder_->now();
    recorder_->record(info_, startNs_, endNs,
                      info_.threadCpu ? threadCpuNowNs() - startCpuNs_ : int64_t{-1});
  }
  ScopedSpan(const ScopedSpan&) = delete;
  ScopedSpan& operator=(const ScopedSpan&) = delete;

 private:
  Recorder* recorder_;
  SpanInfo info_;
  int64_t startNs_ = 0;
  int64_t startCpuNs_ = 0;
};

}  // namespace bubblescope::tracer
