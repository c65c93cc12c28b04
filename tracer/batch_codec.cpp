#include "tracer/batch_codec.h"

#include <array>
#include <cstring>
#include <string>
#include <type_traits>
#include <unordered_map>

namespace bubblescope::tracer {
namespace {

constexpr uint32_t kMagic = 0x42534233;  // "BSB3": events carry a thread CPU time

// An event's fixed-size record: every field of trace_model/event.h's list
// as its integer, the name as an int32 index into the batch's strings; the
// 8-byte fields first, then the 4-byte ones, each group in declaration order
// (no padding). A field added to the list changes the record: bump kMagic.
template <class T>
using WireOf = std::conditional_t<std::is_same_v<T, std::string>, int32_t, trace_model::IntegerOf<T>>;
#define BUBBLESCOPE_WIRE_BYTES(Type, member, ...) +sizeof(WireOf<Type>)
constexpr size_t kWireEventBytes =
    0 BUBBLESCOPE_EVENT_FIELDS(BUBBLESCOPE_WIRE_BYTES, BUBBLESCOPE_WIRE_BYTES);
#undef BUBBLESCOPE_WIRE_BYTES
using WireEvent = std::array<uint8_t, kWireEventBytes>;

int32_t toWire(const std::string&, int32_t nameIndex) { return nameIndex; }
template <class T>
WireOf<T> toWire(T value, int32_t) {
  return trace_model::integerOf(value);
}

// Writes the fields of `width` bytes of `e` at `at`.
template <size_t width>
void putFields(const trace_model::Event& e, int32_t nameIndex, WireEvent& record, size_t& at) {
#define BUBBLESCOPE_WIRE_PUT(Type, member, ...)                                  \
  if constexpr (sizeof(WireOf<Type>) == width) {                                 \
    const WireOf<Type> v = toWire(e.member, nameIndex);                          \
    std::memcpy(record.data() + at, &v, sizeof v);                               \
    at += sizeof v;                                                              \
  }
  BUBBLESCOPE_EVENT_FIELDS(BUBBLESCOPE_WIRE_PUT, BUBBLESCOPE_WIRE_PUT)
#undef BUBBLESCOPE_WIRE_PUT
}

WireEvent wireEvent(const trace_model::Event& e, int32_t nameIndex) {
  WireEvent record;
  size_t at = 0;
  putFields<8>(e, nameIndex, record, at);
  putFields<4>(e, nameIndex, record, at);
  return record;
}

bool fromWire(int32_t index, const std::vector<std::string>& strings, std::string& out) {
  if (index < 0 || static_cast<size_t>(index) >= strings.size()) return false;
  out = strings[static_cast<size_t>(index)];
  return true;
}
template <class T>
bool fromWire(WireOf<T> value, const std::vector<std::string>&, T& out) {
  out = static_cast<T>(value);
  return true;
}

// Reads the fields of `width` bytes of `e` from `at`; false on a name index
// outside the batch's strings.
template <size_t width>
bool takeFields(const WireEvent& record, const std::vector<std::string>& strings, size_t& at,
                trace_model::Event& e) {
  bool ok = true;
#define BUBBLESCOPE_WIRE_TAKE(Type, member, ...)         \
  if constexpr (sizeof(WireOf<Type>) == width) {         \
    WireOf<Type> v;                                      \
    std::memcpy(&v, record.data() + at, sizeof v);       \
    at += sizeof v;                                      \
    ok = fromWire(v, strings, e.member) && ok;           \
  }
  BUBBLESCOPE_EVENT_FIELDS(BUBBLESCOPE_WIRE_TAKE, BUBBLESCOPE_WIRE_TAKE)
#undef BUBBLESCOPE_WIRE_TAKE
  return ok;
}

bool eventFromWire(const WireEvent& record, const std::vector<std::string>& strings,
                   trace_model::Event& e) {
  size_t at = 0;
  const bool ok = takeFields<8>(record, strings, at, e);
  return takeFields<4>(record, strings, at, e) && ok;
}

struct WireSample {
  int64_t timeNs;
  double value;
  int32_t rank, name;
};
struct Header {
  uint32_t magic;
  uint32_t strings, events, steps, samples;
};

class Writer {
 public:
  template <class T>
  void put(const T& v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    bytes_.insert(bytes_.end(), p, p + sizeof v);
  }
  void putString(const std::string& s) {
    put(static_cast<uint32_t>(s.size()));
    bytes_.insert(bytes_.end(), s.begin(), s.end());
  }
  std::vector<uint8_t> take() { return std::move(bytes_); }

 private:
  std::vector<uint8_t> bytes_;
};

class Reader {
 public:
  explicit Reader(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  template <class T>
  bool get(T* v) {
    if (bytes_.size() - at_ < sizeof *v) return false;
    std::memcpy(v, bytes_.data() + at_, sizeof *v);
    at_ += sizeof *v;
    return true;
  }
  bool getString(std::string* s) {
    uint32_t n = 0;
    if (!get(&n) || bytes_.size() - at_ < n) return false;
    s->assign(reinterpret_cast<const char*>(bytes_.data() + at_), n);
    at_ += n;
    return true;
  }
  bool atEnd() const { return at_ == bytes_.size(); }

 private:
  std::span<const uint8_t> bytes_;
  size_t at_ = 0;
};

}  // namespace

std::vector<uint8_t> encodeBatch(const Batch& batch) {
  std::unordered_map<std::string, int32_t> index;
  std::vector<const std::string*> strings;
  auto intern = [&](const std::string& s) {
    auto [it, inserted] = index.emplace(s, static_cast<int32_t>(strings.size()));
    if (inserted) strings.push_back(&it->first);
    return it->second;
  };
  std::vector<int32_t> eventNames, sampleNames;
  for (const trace_model::Event& e : batch.events) eventNames.push_back(intern(e.name));
  for (const trace_model::Sample& s : batch.samples) sampleNames.push_back(intern(s.name));

  Writer w;
  w.put(Header{
      kMagic, static_cast<uint32_t>(strings.size()), static_cast<uint32_t>(batch.events.size()),
      static_cast<uint32_t>(batch.steps.size()), static_cast<uint32_t>(batch.samples.size())});
  for (const std::string* s : strings) w.putString(*s);
  for (size_t i = 0; i < batch.events.size(); ++i) {
    w.put(wireEvent(batch.events[i], eventNames[i]));
  }
  for (const trace_model::StepRecord& s : batch.steps) w.put(s);
  for (size_t i = 0; i < batch.samples.size(); ++i) {
    const trace_model::Sample& s = batch.samples[i];
    w.put(WireSample{s.timeNs, s.value, s.rank, sampleNames[i]});
  }
  return w.take();
}

Result<Batch> decodeBatch(std::span<const uint8_t> bytes) {
  const Status malformed =
      Status::corrupt("malformed trace batch (" + std::to_string(bytes.size()) + " bytes)");
  Reader r(bytes);
  Header h{};
  if (!r.get(&h) || h.magic != kMagic) return malformed;
  // Every record takes at least 4 bytes: reject counts the bytes cannot hold.
  const uint64_t claimed = uint64_t{h.strings} + h.events + h.steps + h.samples;
  if (claimed * 4 > bytes.size()) return malformed;
  std::vector<std::string> strings(h.strings);
  for (auto& s : strings) {
    if (!r.getString(&s)) return malformed;
  }
  Batch batch;
  batch.events.resize(h.events);
  for (trace_model::Event& e : batch.events) {
    WireEvent w;
    if (!r.get(&w) || !eventFromWire(w, strings, e)) return malformed;
    if (!isValid(e.kind) || !isValid(e.dim)) return malformed;
  }
  batch.steps.resize(h.steps);
  for (trace_model::StepRecord& s : batch.steps) {
    if (!r.get(&s)) return malformed;
  }
  batch.samples.resize(h.samples);
  for (trace_model::Sample& s : batch.samples) {
    WireSample w{};
    if (!r.get(&w) || !fromWire(w.name, strings, s.name)) return malformed;
    s.timeNs = w.timeNs;
    s.value = w.value;
    s.rank = w.rank;
  }
  if (!r.atEnd()) return malformed;
  return batch;
}

}  // namespace bubblescope::tracer
