#include "storage/analysis/chrome_export.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <unordered_map>

#include "storage/analysis/imported_layout.h"
#include "storage/analysis/json_text.h"

namespace bubblescope::analysis {
namespace {

using trace_model::EventKind;

std::string laneName(int32_t lane) {
  if (lane >= static_cast<int32_t>(trace_model::Lane::kGpuStreamBase)) {
    return "gpu stream " +
           std::to_string(lane - static_cast<int32_t>(trace_model::Lane::kGpuStreamBase));
  }
  return std::string(trace_model::toString(static_cast<trace_model::Lane>(lane)));
}

void appendMetadata(std::string& out, const char* name, int32_t pid, int32_t tid,
                    const char* argKey, const std::string& value, bool quoted) {
  out += ",\n{\"ph\":\"M\",\"name\":\"";
  out += name;
  out += "\",\"pid\":";
  appendInt(out, pid);
  out += ",\"tid\":";
  appendInt(out, tid);
  out += ",\"args\":{\"";
  out += argKey;
  out += "\":";
  if (quoted) {
    appendEscaped(out, value);
  } else {
    out += value;
  }
  out += "}}";
}

// `,"pid":P,"tid":T,"ts":US`: where and when an event or flow end sits.
void appendPlace(std::string& out, int32_t pid, int32_t tid, int64_t startNs) {
  out += ",\"pid\":";
  appendInt(out, pid);
  out += ",\"tid\":";
  appendInt(out, tid);
  out += ",\"ts\":";
  appendMicros(out, startNs);
}

void appendArgs(std::string& out, const trace_model::Event& e) {
  out += ",\"args\":{";
  bool first = true;
  auto key = [&](const char* k) {
    out += first ? "\"" : ",\"";
    first = false;
    out += k;
    out += "\":";
  };
  auto field = [&](const char* k, int64_t v, int64_t absent) {
    if (v == absent) return;
    key(k);
    appendInt(out, v);
  };
  field("step", e.step, -1);
  field("mb", e.microBatch, -1);
  field("stage", e.stage, -1);
  field("chunk", e.chunk, -1);
  if (e.dim != trace_model::ParallelDim::kNone) {
    key("dim");
    appendEscaped(out, trace_model::toString(e.dim));
  }
  field("bytes", e.bytes, 0);
  field("flops", e.flops, 0);
  field("peer", e.peer, -1);
  field("correlation", e.correlationId, 0);
  field("cpu_ns", e.cpuNs, -1);
  out += '}';
}

// (source rank, destination rank, step, micro-batch, occurrence).
using FlowKey = std::tuple<int32_t, int32_t, int32_t, int32_t, int64_t>;
using PairKey = std::tuple<int32_t, int32_t, int32_t, int32_t>;

// Memory: the ends still waiting for their partner, and the current rank's
// occurrence counts (only its own sends and receives touch them).
class FlowMatcher {
 public:
  explicit FlowMatcher(int64_t* nextId) : next_(*nextId) {}
  // The flow id of this send or receive, shared with its partner.
  int64_t idFor(const trace_model::Event& e, bool isSend) {
    const int32_t src = isSend ? e.rank : e.peer;
    const int32_t dst = isSend ? e.peer : e.rank;
    const PairKey pair{src, dst, e.step, e.microBatch};
    const int64_t n = (isSend ? sends_ : recvs_)[pair]++;
    const FlowKey key{src, dst, e.step, e.microBatch, n};
    auto it = waiting_.find(key);
    if (it != waiting_.end()) {
      const int64_t id = it->second;
      waiting_.erase(it);
      ++matched_;
      return id;
    }
    waiting_.emplace(key, next_);
    peakWaiting_ = std::max(peakWaiting_, static_cast<int64_t>(waiting_.size()));
    return next_++;
  }
  // The counts are keyed by (source, destination): a send's source and a
  // receive's destination are the rank being written, so none is needed
  // again once it is done.
  void endRank() {
    sends_.clear();
    recvs_.clear();
  }
  int64_t matched() const { return matched_; }
  int64_t peakWaiting() const { return peakWaiting_; }

 private:
  std::map<PairKey, int64_t> sends_, recvs_;
  std::map<FlowKey, int64_t> waiting_;
  int64_t peakWaiting_ = 0;
  int64_t& next_;  // shared with LaunchFlows: flow ids are unique in the file
  int64_t matched_ = 0;
};

// Joins the launch calls of one rank to the GPU records they launched (equal
// Event::correlationId; the launch on a host lane, the record on a stream
// lane). A pair is written once both ends are seen, so there are no half
// flows; either end may come first (a fitted GPU clock can put a record a
// little before its launch). Memory: the ends still waiting, one rank's.
class LaunchFlows {
 public:
  explicit LaunchFlows(int64_t* nextId) : next_(*nextId) {}
  void add(const trace_model::Event& e, std::string& out) {
    if (e.correlationId == 0) return;
    const bool gpu = trace_model::isGpuStreamLane(e.lane);
    auto& mine = gpu ? records_ : launches_;
    auto& other = gpu ? launches_ : records_;
    auto it = other.find(e.correlationId);
    if (it == other.end()) {
      mine[e.correlationId] = {static_cast<int32_t>(e.lane), e.startNs};
      return;
    }
    const End here{static_cast<int32_t>(e.lane), e.startNs};
    const End& launch = gpu ? it->second : here;
    const End& record = gpu ? here : it->second;
    const int64_t id = next_++;
    appendEnd(out, ",\n{\"ph\":\"s\"", id, e.rank, launch);
    appendEnd(out, ",\n{\"ph\":\"f\",\"bp\":\"e\"", id, e.rank, record);
    other.erase(it);
    ++matched_;
  }
  // Ends left waiting belong to this rank only.
  void endRank() {
    launches_.clear();
    records_.clear();
  }
  int64_t matched() const { return matched_; }

 private:
  struct End {
    int32_t lane;
    int64_t startNs;
  };
  static void appendEnd(std::string& out, const char* head, int64_t id, int32_t rank,
                        const End& end) {
    out += head;
    out += ",\"name\":\"launch\",\"cat\":\"launch\",\"id\":";
    appendInt(out, id);
    appendPlace(out, rank, end.lane, end.startNs);
    out += '}';
  }
  std::unordered_map<int64_t, End> launches_, records_;
  int64_t& next_;
  int64_t matched_ = 0;
};

}  // namespace

Result<ChromeExportStats> exportChromeTrace(storage::TraceReader& reader, int64_t runId,
                                            const std::string& outPath) {
  BS_ASSIGN_OR_RETURN(auto run, reader.run(runId));
  BS_ASSIGN_OR_RETURN(auto ranks, reader.ranks(runId));
  // Opening (and truncating) the trace or its -wal/-shm outside SQLite would
  // destroy it and drop this process's locks on it (trace_file_access.h).
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::error_code ec;
    if (std::filesystem::equivalent(outPath, reader.path() + suffix, ec)) {
      return Status::invalidArgument("cannot write " + outPath + ": it is the trace file " +
                                     reader.path() + suffix + " being read");
    }
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(outPath.c_str(), "wb"),
                                                       &std::fclose);
  if (!file) return Status::ioError("cannot write " + outPath + ": " + std::strerror(errno));
  JsonOut out(file.get(), outPath);
  std::string& t = out.text();
  t += "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"run\":";
  appendInt(t, run.id);
  t += ",\"name\":";
  appendEscaped(t, run.info.name);
  t += ",\"status\":";
  appendEscaped(t, storage::toString(run.health));
  t += "},\n\"traceEvents\":[\n";
  t += "{\"ph\":\"M\",\"name\":\"trace_name\",\"pid\":0,\"tid\":0,\"args\":{\"name\":";
  appendEscaped(t, "run " + std::to_string(run.id) + " " + run.info.name);
  t += "}}";

  int64_t nextFlowId = 1;
  FlowMatcher flows(&nextFlowId);
  LaunchFlows launches(&nextFlowId);
  ChromeExportStats stats;
  // The ranks of one pipeline (equal dp and tp, every pp) one after another:
  // their sends and receives are each other's, so the ends waiting for a
  // partner are about one rank's, not those of a whole stage of the run.
  std::stable_sort(ranks.begin(), ranks.end(),
                   [](const storage::RankInfo& a, const storage::RankInfo& b) {
                     return std::tie(a.dp, a.tp, a.pp) < std::tie(b.dp, b.tp, b.pp);
                   });
  for (const auto& r : ranks) {
    const std::string process = "rank " + std::to_string(r.rank) + " (dp" + coordinateText(r.dp) +
                                " tp" + coordinateText(r.tp) + " pp" + coordinateText(r.pp) + ")";
    appendMetadata(t, "process_name", r.rank, 0, "name", process, true);
    appendMetadata(t, "process_sort_index", r.rank, 0, "sort_index", std::to_string(r.rank), false);
    std::set<int32_t> lanes;
    BS_RETURN_IF_ERROR(
        reader.visitEvents(runId, r.rank, [&](const trace_model::Event& e) -> Status {
          const int32_t lane = static_cast<int32_t>(e.lane);
          if (lanes.insert(lane).second) {
            appendMetadata(t, "thread_name", e.rank, lane, "name", laneName(lane), true);
            appendMetadata(t, "thread_sort_index", e.rank, lane, "sort_index", std::to_string(lane),
                           false);
          }
          t += ",\n{\"ph\":\"X\",\"name\":";
          appendEscaped(t, e.name);
          t += ",\"cat\":";
          appendEscaped(t, trace_model::toString(e.kind));
          appendPlace(t, e.rank, lane, e.startNs);
          t += ",\"dur\":";
          appendMicros(t, e.endNs - e.startNs);
          appendArgs(t, e);
          t += '}';
          ++stats.events;
          const bool isSend = e.kind == EventKind::kSend;
          if ((isSend || e.kind == EventKind::kRecv) && e.peer >= 0) {
            t += isSend ? ",\n{\"ph\":\"s\"" : ",\n{\"ph\":\"f\",\"bp\":\"e\"";
            t += ",\"name\":\"transfer\",\"cat\":\"p2p\",\"id\":";
            appendInt(t, flows.idFor(e, isSend));
            appendPlace(t, e.rank, lane, e.startNs);
            t += '}';
          }
          launches.add(e, t);
          return out.maybeFlush();
        }));
    launches.endRank();
    flows.endRank();
  }
  t += "\n]}\n";
  BS_RETURN_IF_ERROR(out.flush());
  if (std::fflush(file.get()) != 0) {
    return Status::ioError("cannot write " + outPath + ": " + std::strerror(errno));
  }
  stats.flows = flows.matched();
  stats.peakWaitingFlowEnds = flows.peakWaiting();
  stats.launchFlows = launches.matched();
  stats.bytes = out.bytes();
  return stats;
}

}  // namespace bubblescope::analysis
