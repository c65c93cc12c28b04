#include "tracer/batch_codec.h"

#include <cstring>
#include <string>
#include <unordered_map>

namespace bubblescope::tracer {
namespace {

constexpr uint32_t kMagic = 0x42534233;  // "BSB3": events carry a thread CPU time

// Fixed-size records; names are indexes into the batch's string table.
struct WireEvent {
  int64_t startNs, endNs, bytes, flops, correlationId, cpuNs;
  int32_t rank, lane, kind, name, step, microBatch, stage, chunk, dim, peer;
};
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
    const trace_model::Event& e = batch.events[i];
    w.put(WireEvent{e.startNs, e.endNs, e.bytes, e.flops, e.correlationId, e.cpuNs, e.rank,
                    static_cast<int32_t>(e.lane), static_cast<int32_t>(e.kind), eventNames[i],
                    e.step, e.microBatch, e.stage, e.chunk, static_cast<int32_t>(e.dim), e.peer});
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
  auto name = [&](int32_t i, std::string* out) {
    if (i < 0 || static_cast<size_t>(i) >= strings.size()) return false;
    *out = strings[i];
    return true;
  };
  Batch batch;
  batch.events.resize(h.events);
  for (trace_model::Event& e : batch.events) {
    WireEvent w{};
    if (!r.get(&w) || !name(w.name, &e.name)) return malformed;
    e.startNs = w.startNs;
    e.endNs = w.endNs;
    e.bytes = w.bytes;
    e.flops = w.flops;
    e.correlationId = w.correlationId;
    e.cpuNs = w.cpuNs;
    e.rank = w.rank;
    e.lane = static_cast<trace_model::Lane>(w.lane);
    e.kind = static_cast<trace_model::EventKind>(w.kind);
    e.step = w.step;
    e.microBatch = w.microBatch;
    e.stage = w.stage;
    e.chunk = w.chunk;
    e.dim = static_cast<trace_model::ParallelDim>(w.dim);
    e.peer = w.peer;
    if (!isValid(e.kind) || !isValid(e.dim)) return malformed;
  }
  batch.steps.resize(h.steps);
  for (trace_model::StepRecord& s : batch.steps) {
    if (!r.get(&s)) return malformed;
  }
  batch.samples.resize(h.samples);
  for (trace_model::Sample& s : batch.samples) {
    WireSample w{};
    if (!r.get(&w) || !name(w.name, &s.name)) return malformed;
    s.timeNs = w.timeNs;
    s.value = w.value;
    s.rank = w.rank;
  }
  if (!r.atEnd()) return malformed;
  return batch;
}

}  // namespace bubblescope::tracer
