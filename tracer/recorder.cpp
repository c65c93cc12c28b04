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
    e.name = s.info.name;
    e.startNs = s.startNs;
    e.endNs = s.endNs;
    e.cpuNs = s.cpuNs;
#define BUBBLESCOPE_COPY_SPANNED(Type, member, initial, column, since, bit, span) \
  BUBBLESCOPE_IF_##span(e.member = s.info.member;)
    BUBBLESCOPE_EVENT_FIELDS(BUBBLESCOPE_EVENT_SKIP, BUBBLESCOPE_COPY_SPANNED)
#undef BUBBLESCOPE_COPY_SPANNED
    out.push_back(std::move(e));
  }
  tail_.store(head, std::memory_order_release);
  return static_cast<size_t>(head - tail);
}

}  // namespace bubblescope::tracer
