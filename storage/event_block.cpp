#include "storage/event_block.h"

#include <algorithm>
#include <array>
#include <string>

namespace bubblescope::storage {
namespace {

// The fields after start and duration, the most often changing first so
// that a usual mask fits one varint byte.
constexpr int kFieldCount = 13;
using Fields = std::array<int64_t, kFieldCount>;

Fields fieldsOf(const StoredEvent& e) {
  return {e.nameId, e.kind,  e.lane,  e.microBatch, e.bytes,       e.dim,  e.peer,
          e.step,   e.stage, e.chunk, e.flops,      e.correlation, e.cpuNs};
}

void setFields(StoredEvent& e, const Fields& f) {
  e.nameId = f[0];
  e.kind = static_cast<int32_t>(f[1]);
  e.lane = static_cast<int32_t>(f[2]);
  e.microBatch = static_cast<int32_t>(f[3]);
  e.bytes = f[4];
  e.dim = static_cast<int32_t>(f[5]);
  e.peer = static_cast<int32_t>(f[6]);
  e.step = static_cast<int32_t>(f[7]);
  e.stage = static_cast<int32_t>(f[8]);
  e.chunk = static_cast<int32_t>(f[9]);
  e.flops = f[10];
  e.correlation = f[11];
  e.cpuNs = f[12];
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
  s.lane = static_cast<int32_t>(e.lane);
  s.kind = static_cast<int32_t>(e.kind);
  s.dim = static_cast<int32_t>(e.dim);
  s.step = e.step;
  s.microBatch = e.microBatch;
  s.stage = e.stage;
  s.chunk = e.chunk;
  s.peer = e.peer;
  s.bytes = e.bytes;
  s.flops = e.flops;
  s.correlation = e.correlationId;
  s.cpuNs = e.cpuNs;
  return s;
}

void toEvent(const StoredEvent& s, int32_t rank, trace_model::Event& e) {
  e.rank = rank;
  e.lane = static_cast<trace_model::Lane>(s.lane);
  e.kind = static_cast<trace_model::EventKind>(s.kind);
  e.startNs = s.startNs;
  e.endNs = s.endNs;
  e.step = s.step;
  e.microBatch = s.microBatch;
  e.stage = s.stage;
  e.chunk = s.chunk;
  e.dim = static_cast<trace_model::ParallelDim>(s.dim);
  e.bytes = s.bytes;
  e.flops = s.flops;
  e.peer = s.peer;
  e.correlationId = s.correlation;
  e.cpuNs = s.cpuNs;
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
    putVarint(block.data, static_cast<uint64_t>(e.startNs - previousStart));
    putVarint(block.data, static_cast<uint64_t>(e.endNs - e.startNs));
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
    if (e.correlation != 0) {
      block.minCorrelation =
          block.minCorrelation == 0 ? e.correlation : std::min(block.minCorrelation, e.correlation);
      block.maxCorrelation =
          block.maxCorrelation == 0 ? e.correlation : std::max(block.maxCorrelation, e.correlation);
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
