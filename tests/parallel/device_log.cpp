#include "device_log.h"

#include <algorithm>
#include <map>

namespace bubblescope::engine::testing {
namespace {

bool anyOverlap(const std::vector<ByteRange>& a, const std::vector<ByteRange>& b) {
  for (const ByteRange& x : a) {
    for (const ByteRange& y : b) {
      if (x.overlaps(y)) return true;
    }
  }
  return false;
}

}  // namespace

void DeviceLog::op(std::string name, std::vector<ByteRange> reads, std::vector<ByteRange> writes) {
  entries_.push_back({DeviceLogEntry::Kind::kOp, std::move(name), std::move(reads),
                      std::move(writes), -1});
}

int64_t DeviceLog::start(std::string name, std::vector<ByteRange> reads,
                         std::vector<ByteRange> writes) {
  const int64_t id = nextComm_++;
  entries_.push_back({DeviceLogEntry::Kind::kStart, std::move(name), std::move(reads),
                      std::move(writes), id});
  return id;
}

void DeviceLog::wait(int64_t comm) {
  entries_.push_back({DeviceLogEntry::Kind::kWait, "", {}, {}, comm});
}

void DeviceLog::free(ByteRange range) {
  entries_.push_back({DeviceLogEntry::Kind::kFree, "free", {}, {range}, -1});
}

std::vector<std::string> DeviceLog::violations() const {
  using Kind = DeviceLogEntry::Kind;
  std::vector<std::string> out;
  std::map<int64_t, const DeviceLogEntry*> inFlight;
  for (size_t i = 0; i < entries_.size(); ++i) {
    const DeviceLogEntry& e = entries_[i];
    const std::string at = "entry " + std::to_string(i) + ": ";
    switch (e.kind) {
      case Kind::kStart:
        for (const auto& [id, c] : inFlight) {
          if (anyOverlap(e.writes, c->writes) || anyOverlap(e.writes, c->reads) ||
              anyOverlap(e.reads, c->writes)) {
            out.push_back(at + e.name + " starts on a buffer that " + c->name +
                          " (in flight) uses");
          }
        }
        inFlight[e.comm] = &e;
        break;
      case Kind::kWait:
        if (inFlight.erase(e.comm) == 0) {
          out.push_back(at + "a wait for collective " + std::to_string(e.comm) +
                        ", which is not in flight");
        }
        break;
      case Kind::kOp:
        for (const auto& [id, c] : inFlight) {
          if (anyOverlap(e.writes, c->reads) || anyOverlap(e.writes, c->writes)) {
            out.push_back(at + e.name + " writes a buffer that " + c->name +
                          " (in flight) uses: the collective does not wait for that compute");
          }
          if (anyOverlap(e.reads, c->writes)) {
            out.push_back(at + e.name + " reads a buffer before " + c->name +
                          " has finished writing it");
          }
        }
        break;
      case Kind::kFree:
        for (const auto& [id, c] : inFlight) {
          if (anyOverlap(e.writes, c->reads) || anyOverlap(e.writes, c->writes)) {
            out.push_back(at + "a buffer of " + c->name + " is freed while it is in flight");
          }
        }
        break;
    }
  }
  for (const auto& [id, c] : inFlight) out.push_back(c->name + " is never waited");
  return out;
}

int64_t DeviceLog::opsWhileInFlight() const {
  int64_t open = 0, n = 0;
  for (const DeviceLogEntry& e : entries_) {
    if (e.kind == DeviceLogEntry::Kind::kStart) ++open;
    if (e.kind == DeviceLogEntry::Kind::kWait) --open;
    if (e.kind == DeviceLogEntry::Kind::kOp && open > 0) ++n;
  }
  return n;
}

int64_t DeviceLog::count(DeviceLogEntry::Kind kind) const {
  return std::count_if(entries_.begin(), entries_.end(),
                       [kind](const DeviceLogEntry& e) { return e.kind == kind; });
}

}  // namespace bubblescope::engine::testing
