#include "tracer/recorder.h"

#include <bit>

namespace bubblescope::tracer {

Recorder::Recorder(int32_t rank, bool enabled, size_t capacity)
    : rank_(rank),
      enabled_(enabled),
      capacity_(std::bit_ceil(capacity < 2 ? size_t{2} : capacity)),
      slots_(enabled ? std::make_unique<RawSpan[]>(capacity_) : nullptr) {}

size_t Recorder::drainInto(std::vector<trace_model::Event>& out) {
  if (!enabled_) return 0;
  const uint64_t tail = tail_.load(std::memory_order_relaxed);
  const uint64_t head = head_.load(std::memory_order_acquire);
  out.reserve(out.size() + (head - tail));
  for (uint64_t i = tail; i != head; ++i) {
    const RawSpan& s = slots_[i & (capacity_ - 1)];
    trace_model::Event e;
    e.rank = rank_;
    e.lane = s.info.lane;
    e.kind = s.info.kind;
    e.name = s.info.name;
    e.startNs = s.startNs;
    e.endNs = s.endNs;
    e.step = s.info.step;
    e.microBatch = s.info.microBatch;
    e.stage = s.info.stage;
    e.chunk = s.info.chunk;
    e.dim = s.info.dim;
    e.bytes = s.info.bytes;
    e.flops = s.info.flops;
    e.peer = s.info.peer;
    e.cpuNs = s.cpuNs;
    out.push_back(std::move(e));
  }
  tail_.store(head, std::memory_order_release);
  return static_cast<size_t>(head - tail);
}

}  // namespace bubblescope::tracer
