#include "storage/event_block.h"

#include <algorithm>
#include <array>
#include <string>

namespace bubblescope::storage {
namespace {

// The fields after start and duration, by their mask bit: the name (bit 0),
// then the attributes at the bits trace_model/event.h's list gives them (the
// most often changing first, so that a usual mask fits one varint byte).
#define BUBBLESCOPE_COUNT_ATTRIBUTE(...) +1
constexpr int kFieldCount =
    1 + (0 BUBBLESCOPE_EVENT_FIELDS(BUBBLESCOPE_EVENT_SKIP, BUBBLESCOPE_COUNT_ATTRIBUTE));
#undef BUBBLESCOPE_COUNT_ATTRIBUTE
using Fields = std::array<int64_t, kFieldCount>;

// Each bit 0 .. kFieldCount - 1 belongs to exactly one field.
constexpr bool bitsAreDistinct() {
  std::array<bool, kFieldCount> taken{};
  taken[0] = true;
  bool ok = true;
#define BUBBLESCOPE_TAKE_BIT(Type, member, initial, column, since, bit, span) \
  ok = ok && (bit) > 0 && (bit) < kFieldCount && !taken[bit];              \
  if (ok) taken[bit] = true;
  BUBBLESCOPE_EVENT_FIELDS(BUBBLESCOPE_EVENT_SKIP, BUBBLESCOPE_TAKE_BIT)
#undef BUBBLESCOPE_TAKE_BIT
  return ok;
}
static_assert(kFieldCount <= 64 && bitsAreDistinct(),
              "each event attribute needs its own block bit 1 .. 63 (trace_model/event.h)");

Fields fieldsOf(const StoredEvent& e) {
  Fields f{};
  f[0] = e.nameId;
#define BUBBLESCOPE_FIELD_OUT(Type, member, initial, column, since, bit, span) f[bit] = e.member;
  BUBBLESCOPE_EVENT_FIELDS(BUBBLESCOPE_EVENT_SKIP, BUBBLESCOPE_FIELD_OUT)
#undef BUBBLESCOPE_FIELD_OUT
  return f;
}

void setFields(StoredEvent& e, const Fields& f) {
  e.nameId = f[0];
#define BUBBLESCOPE_FIELD_IN(Type, member, initial, column, since, bit, span) \
  e.member = static_cast<trace_model::IntegerOf<Type>>(f[bit]);
  BUBBLESCOPE_EVENT_FIELDS(BUBBLESCOPE_EVENT_SKIP, BUBBLESCOPE_FIELD_IN)
#undef BUBBLESCOPE_FIELD_IN
}

// What the first event of a block is compared with: every field at its
// "does not apply" value.
const Fields kInitialFields = fieldsOf(StoredEvent{});

void putVarint(std::vector<uint8_t>& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<uint8_t>(v));
}

uint64_t zigzag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
int64_t unzigzag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

class VarintReader {
 public:
  explicit VarintReader(std::span<const uint8_t> data) : p_(data.data()), end_(p_ + data.size()) {}
  bool next(uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64 && p_ < end_; shift += 7) {
      const uint8_t b = *p_++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;  // ran off the data, or longer than 10 bytes
  }
  bool atEnd() const { return p_ == end_; }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

}  // namespace

StoredEvent storedEvent(const trace_model::Event& e, int64_t nameId) {
  StoredEvent s;
  s.startNs = e.startNs;
  s.endNs = e.endNs;
  s.nameId = nameId;
#define BUBBLESCOPE_TO_STORED(Type, member, ...) s.member = trace_model::integerOf(e.member);
  BUBBLESCOPE_EVENT_FIELDS(BUBBLESCOPE_EVENT_SKIP, BUBBLESCOPE_TO_STORED)
#undef BUBBLESCOPE_TO_STORED
  return s;
}

void toEvent(const StoredEvent& s, int32_t rank, trace_model::Event& e) {
  e.rank = rank;
  e.startNs = s.startNs;
  e.endNs = s.endNs;
#define BUBBLESCOPE_FROM_STORED(Type, member, ...) e.member = static_cast<Type>(s.member);
  BUBBLESCOPE_EVENT_FIELDS(BUBBLESCOPE_EVENT_SKIP, BUBBLESCOPE_FROM_STORED)
#undef BUBBLESCOPE_FROM_STORED
}

Status encodeBlocks(std::span<const StoredEvent> events,
                    const std::function<Status(const EventBlock&)>& emit) {
  EventBlock block;
  Fields previous = kInitialFields;
  int64_t previousStart = 0;
  for (const StoredEvent& e : events) {
    if (block.count == 0) {
      block.firstStartNs = previousStart = e.startNs;
      block.maxEndNs = e.endNs;
      previous = kInitialFields;
    }
    // Differences taken modulo 2^64, as decodeBlock sums them: any two
    // int64 times (a difference may not fit an int64; UBSan found
    // 0 - INT64_MIN here).
    const auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
    putVarint(block.data, u(e.startNs) - u(previousStart));
    putVarint(block.data, u(e.endNs) - u(e.startNs));
    const Fields fields = fieldsOf(e);
    uint64_t mask = 0;
    for (int i = 0; i < kFieldCount; ++i) {
      if (fields[i] != previous[i]) mask |= uint64_t{1} << i;
    }
    putVarint(block.data, mask);
    for (int i = 0; i < kFieldCount; ++i) {
      if ((mask >> i) & 1) putVarint(block.data, zigzag(fields[i]));
    }
    previous = fields;
    previousStart = e.startNs;
    block.maxEndNs = std::max(block.maxEndNs, e.endNs);
    if (const int64_t c = e.correlationId; c != 0) {
      block.minCorrelation = block.minCorrelation == 0 ? c : std::min(block.minCorrelation, c);
      block.maxCorrelation = block.maxCorrelation == 0 ? c : std::max(block.maxCorrelation, c);
    }
    if (++block.count == kBlockMaxEvents || block.data.size() >= kBlockTargetBytes) {
      BS_RETURN_IF_ERROR(emit(block));
      block = EventBlock{};
    }
  }
  if (block.count > 0) return emit(block);
  return Status::ok();
}

Status decodeBlock(std::span<const uint8_t> data, int64_t firstStartNs, int64_t count,
                   std::vector<StoredEvent>& out) {
  VarintReader in(data);
  Fields fields = kInitialFields;
  uint64_t start = static_cast<uint64_t>(firstStartNs);
  for (int64_t n = 0; n < count; ++n) {
    uint64_t delta = 0, duration = 0, mask = 0;
    if (!in.next(delta) || !in.next(duration) || !in.next(mask) || (mask >> kFieldCount) != 0) {
      return Status::corrupt("event block is damaged at its event " + std::to_string(n) + " of " +
                             std::to_string(count));
    }
    for (int i = 0; i < kFieldCount; ++i) {
      if (((mask >> i) & 1) == 0) continue;
      uint64_t v = 0;
      if (!in.next(v)) {
        return Status::corrupt("event block is damaged at its event " + std::to_string(n) + " of " +
                               std::to_string(count));
      }
      fields[i] = unzigzag(v);
    }
    start += delta;
    StoredEvent& e = out.emplace_back();
    e.startNs = static_cast<int64_t>(start);
    e.endNs = static_cast<int64_t>(start + duration);
    setFields(e, fields);
  }
  if (!in.atEnd()) {
    return Status::corrupt("event block holds more data than its " + std::to_string(count) +
                           " events");
  }
  return Status::ok();
}

}  // namespace bubblescope::storage
