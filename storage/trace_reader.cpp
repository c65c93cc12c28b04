#include "storage/trace_reader.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <type_traits>
#include <unordered_map>

#include "storage/event_block_reader.h"
#include "storage/process_identity.h"
#include "storage/schema.h"
#include "storage/sqlite_db.h"
#include "storage/trace_file_access.h"
#include "storage/trace_reader_impl.h"

namespace bubblescope::storage {
namespace {

// A run on another host whose heartbeat is older than this is taken as gone.
constexpr int64_t kRemoteHeartbeatTimeoutNs = 60LL * 1000000000LL;

RunStatus parseStatus(const std::string& s) {
  if (s == "finished") return RunStatus::kFinished;
  if (s == "failed") return RunStatus::kFailed;
  if (s == "stopped") return RunStatus::kStopped;
  return RunStatus::kRunning;
}

RunHealth healthOf(const RunRecord& r, int64_t startTicks, int64_t heartbeatUnixNs) {
  switch (r.status) {
    case RunStatus::kFinished:
      return RunHealth::kFinished;
    case RunStatus::kFailed:
      return RunHealth::kFailed;
    case RunStatus::kStopped:
      return RunHealth::kStopped;
    case RunStatus::kRunning:
      break;
  }
  switch (livenessOf({r.writerHost, r.writerPid, startTicks})) {
    case Liveness::kAlive:
      return RunHealth::kRunning;
    case Liveness::kGone:
      return RunHealth::kInterrupted;
    case Liveness::kUnknown:
      break;
  }
  return unixNowNs() - heartbeatUnixNs > kRemoteHeartbeatTimeoutNs ? RunHealth::kInterrupted
                                                                   : RunHealth::kRunning;
}

}  // namespace

Result<std::unique_ptr<TraceReader>> TraceReader::open(const std::string& path) {
  BS_ASSIGN_OR_RETURN(ReadingConnection c, openForReading(path));
  BS_RETURN_IF_ERROR(Impl::configure(*c.db));
  return std::unique_ptr<TraceReader>(new TraceReader(std::make_unique<Impl>(path, std::move(c))));
}

TraceReader::TraceReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TraceReader::~TraceReader() = default;

int32_t TraceReader::latestSchemaVersion() {
  return kSchemaVersion;
}
int32_t TraceReader::schemaVersion() const {
  return impl_->version();
}
const std::string& TraceReader::path() const {
  return impl_->path();
}

Result<std::vector<RunRecord>> TraceReader::runs() {
  BS_RETURN_IF_ERROR(impl_->follow());
  std::vector<RunRecord> out;
  BS_RETURN_IF_ERROR(impl_->query(
      "SELECT id, name, layout_json, model_json, backend, world_size, status, error, source, "
      "created_unix_ns, ended_unix_ns, writer_host, writer_pid, writer_start_ticks, "
      "heartbeat_unix_ns, event_count FROM runs ORDER BY id",
      [](SqliteStatement&) {},
      [&](SqliteStatement& s) {
        RunRecord r;
        r.id = s.columnInt(0);
        r.info.name = s.columnText(1);
        r.info.layoutJson = s.columnText(2);
        r.info.modelJson = s.columnText(3);
        r.info.backend = s.columnText(4);
        r.info.worldSize = static_cast<int32_t>(s.columnInt(5));
        r.status = parseStatus(s.columnText(6));
        r.error = s.columnText(7);
        r.info.simulated = s.columnText(8) == "simulated";
        r.info.imported = s.columnText(8) == "imported";
        r.createdUnixNs = s.columnInt(9);
        r.endedUnixNs = s.columnInt(10);
        r.writerHost = s.columnText(11);
        r.writerPid = s.columnInt(12);
        r.eventCount = s.columnInt(15);
        r.health = healthOf(r, s.columnInt(13), s.columnInt(14));
        out.push_back(std::move(r));
      }));
  return out;
}

Result<RunRecord> TraceReader::run(int64_t runId) {
  BS_ASSIGN_OR_RETURN(auto all, runs());
  for (auto& r : all) {
    if (r.id == runId) return std::move(r);
  }
  std::string known;
  for (const auto& r : all) known += (known.empty() ? "" : ", ") + std::to_string(r.id);
  return Status::notFound("run " + std::to_string(runId) + " is not in " + impl_->db().path() +
                          (known.empty() ? " (it holds no runs)" : " (runs: " + known + ")"));
}

Result<std::vector<RankInfo>> TraceReader::ranks(int64_t runId) {
  BS_RETURN_IF_ERROR(impl_->follow());
  std::vector<RankInfo> out;
  const std::string sql = std::string(
                              "SELECT rank, host, pid, device, dp, tp, pp, clock_offset_ns, "
                              "clock_uncertainty_ns, cores_on_host, ranks_on_host, ") +
                          (impl_->version() >= 2 ? "parameters" : "0") +
                          (impl_->version() >= 7 ? ", gpu_clock_uncertainty_ns" : ", -1") +
                          " FROM ranks WHERE run = ? ORDER BY rank";
  BS_RETURN_IF_ERROR(impl_->query(
      sql, [&](SqliteStatement& s) { s.bind(1, runId); },
      [&](SqliteStatement& s) -> Status {
        RankInfo r;
        BS_ASSIGN_OR_RETURN(r.rank, impl_->rankAt(s, 0));
        r.host = s.columnText(1);
        r.pid = s.columnInt(2);
        r.device = s.columnText(3);
        r.dp = static_cast<int32_t>(s.columnInt(4));
        r.tp = static_cast<int32_t>(s.columnInt(5));
        r.pp = static_cast<int32_t>(s.columnInt(6));
        r.clockOffsetNs = s.columnInt(7);
        r.clockUncertaintyNs = s.columnInt(8);
        r.coresOnHost = static_cast<int32_t>(s.columnInt(9));
        r.ranksOnHost = static_cast<int32_t>(s.columnInt(10));
        r.parameters = s.columnInt(11);
        r.gpuClockUncertaintyNs = s.columnInt(12);
        out.push_back(std::move(r));
        return Status::ok();
      }));
  return out;
}

Result<std::vector<trace_model::StepRecord>> TraceReader::steps(int64_t runId) {
  BS_RETURN_IF_ERROR(impl_->follow());
  std::vector<trace_model::StepRecord> out;
  BS_RETURN_IF_ERROR(impl_->query(
      "SELECT rank, step, loss, tokens, start_ns, end_ns FROM steps WHERE run = ? "
      "ORDER BY step, rank",
      [&](SqliteStatement& s) { s.bind(1, runId); },
      [&](SqliteStatement& s) -> Status {
        trace_model::StepRecord r;
        BS_ASSIGN_OR_RETURN(r.rank, impl_->rankAt(s, 0));
        r.step = static_cast<int32_t>(s.columnInt(1));
        r.loss = s.columnIsNull(2) ? std::numeric_limits<double>::quiet_NaN() : s.columnDouble(2);
        r.tokens = s.columnInt(3);
        r.startNs = s.columnInt(4);
        r.endNs = s.columnInt(5);
        out.push_back(r);
        return Status::ok();
      }));
  return out;
}

Result<std::vector<trace_model::Sample>> TraceReader::samples(int64_t runId, int32_t rank,
                                                              const std::string& name) {
  BS_RETURN_IF_ERROR(impl_->follow());
  std::vector<trace_model::Sample> out;
  BS_RETURN_IF_ERROR(impl_->query(
      "SELECT s.rank, s.name, s.t_ns, s.value FROM samples s "
      "WHERE s.run = ?1 AND (?2 < 0 OR s.rank = ?2) "
      "AND (?3 = '' OR s.name = (SELECT id FROM strings WHERE value = ?3)) "
      "ORDER BY s.rank, s.name, s.t_ns",
      [&](SqliteStatement& s) {
        s.bind(1, runId);
        s.bind(2, int64_t{rank});
        s.bind(3, std::string_view(name));
      },
      [&](SqliteStatement& s) -> Status {
        trace_model::Sample x;
        BS_ASSIGN_OR_RETURN(x.rank, impl_->rankAt(s, 0));
        BS_ASSIGN_OR_RETURN(x.name, impl_->stringById(s.columnInt(1)));
        x.timeNs = s.columnInt(2);
        x.value = s.columnDouble(3);
        out.push_back(std::move(x));
        return Status::ok();
      }));
  return out;
}

Result<std::vector<trace_model::Event>> TraceReader::eventsInWindow(
    int64_t runId, const std::vector<int32_t>& ranks, int64_t t0Ns, int64_t t1Ns) {
  BS_RETURN_IF_ERROR(impl_->follow());
  std::vector<int32_t> wanted = ranks;
  if (wanted.empty()) {
    BS_ASSIGN_OR_RETURN(auto all, this->ranks(runId));
    for (const auto& r : all) wanted.push_back(r.rank);
  }
  if (impl_->version() >= kBlockSchemaVersion) {
    return impl_->eventBlocksInWindow(runId, wanted, t0Ns, t1Ns);
  }
  // An event overlapping the window starts no earlier than t0 minus the
  // longest event of the run, so the (run, rank, start_ns) index bounds it.
  int64_t maxEventNs = 0;
  BS_RETURN_IF_ERROR(impl_->query(
      "SELECT max_event_ns FROM runs WHERE id = ?", [&](SqliteStatement& s) { s.bind(1, runId); },
      [&](SqliteStatement& s) { maxEventNs = s.columnInt(0); }));
  std::vector<trace_model::Event> out;
  Status rowStatus;
  const std::string sql = "SELECT " + impl_->columns() +
                          " FROM events WHERE run = ? AND rank = ? AND start_ns >= ? "
                          "AND start_ns < ? AND end_ns > ? ORDER BY start_ns";
  BS_ASSIGN_OR_RETURN(auto stmt, impl_->db().prepare(sql));
  for (int32_t rank : wanted) {
    stmt.bind(1, runId);
    stmt.bind(2, int64_t{rank});
    stmt.bind(3, t0Ns - maxEventNs);
    stmt.bind(4, t1Ns);
    stmt.bind(5, t0Ns);
    while (true) {
      auto more = stmt.step();
      if (!more.isOk()) return more.status();
      if (!*more) break;
      BS_ASSIGN_OR_RETURN(auto e, impl_->eventAt(stmt, 0));
      out.push_back(std::move(e));
    }
    stmt.reset();
  }
  return out;
}

Result<EventPage> TraceReader::eventsAfter(int64_t runId, int64_t cursor, int64_t limit) {
  BS_RETURN_IF_ERROR(impl_->follow());
  EventPage page;
  page.cursor = cursor;
  if (impl_->version() >= kBlockSchemaVersion) {
    std::vector<StoredEvent> stored;
    std::vector<int32_t> ranks;
    BS_RETURN_IF_ERROR(storedEventsAfter(impl_->db(), runId, page.cursor, limit, stored, ranks));
    page.events.resize(stored.size());
    for (size_t i = 0; i < stored.size(); ++i) {
      BS_RETURN_IF_ERROR(impl_->toEventNamed(stored[i], ranks[i], page.events[i]));
    }
    return page;
  }
  BS_RETURN_IF_ERROR(impl_->rowsAfter(runId, cursor, limit, page.cursor,
                                      [&](int32_t rank, const StoredEvent& stored) {
                                        trace_model::Event& e = page.events.emplace_back();
                                        return impl_->toEventNamed(stored, rank, e);
                                      }));
  return page;
}

Result<SpanPage> TraceReader::spansAfter(int64_t runId, int64_t cursor, int64_t limit) {
  BS_RETURN_IF_ERROR(impl_->follow());
  SpanPage page;
  auto span = [](int32_t rank, const StoredEvent& e) {
    EventSpan s;
    s.startNs = e.startNs;
    s.endNs = e.endNs;
    s.rank = rank;
    s.chunk = e.chunk;
    s.lane = static_cast<trace_model::Lane>(e.lane);
    s.kind = static_cast<trace_model::EventKind>(e.kind);
    s.dim = static_cast<trace_model::ParallelDim>(e.dim);
    s.nameId = e.nameId;
    return s;
  };
  page.cursor = cursor;
  if (impl_->version() >= kBlockSchemaVersion) {
    std::vector<StoredEvent> stored;
    std::vector<int32_t> ranks;
    BS_RETURN_IF_ERROR(storedEventsAfter(impl_->db(), runId, page.cursor, limit, stored, ranks));
    page.spans.reserve(stored.size());
    for (size_t i = 0; i < stored.size(); ++i) page.spans.push_back(span(ranks[i], stored[i]));
    return page;
  }
  // Rows of older files, read without their names.
  BS_RETURN_IF_ERROR(impl_->rowsAfter(runId, cursor, limit, page.cursor,
                                      [&](int32_t rank, const StoredEvent& stored) {
                                        page.spans.push_back(span(rank, stored));
                                        return Status::ok();
                                      }));
  return page;
}

Result<std::string> TraceReader::eventName(int64_t nameId) {
  BS_RETURN_IF_ERROR(impl_->follow());
  return impl_->stringById(nameId);
}

Status TraceReader::visitEvents(int64_t runId, int32_t rank, const EventVisitor& visit) {
  BS_RETURN_IF_ERROR(impl_->follow());
  if (impl_->version() >= kBlockSchemaVersion) {
    trace_model::Event e;
    return visitRankBlocks(impl_->db(), runId, rank, {}, [&](const StoredEvent& s) -> Status {
      BS_RETURN_IF_ERROR(impl_->toEventNamed(s, rank, e));
      return visit(e);
    });
  }
  const std::string sql = "SELECT " + impl_->columns() +
                          " FROM events WHERE run = ? AND rank = ? ORDER BY start_ns, id";
  BS_ASSIGN_OR_RETURN(auto stmt, impl_->db().prepare(sql));
  stmt.bind(1, runId);
  stmt.bind(2, int64_t{rank});
  while (true) {
    auto more = stmt.step();
    if (!more.isOk()) return more.status();
    if (!*more) return Status::ok();
    BS_ASSIGN_OR_RETURN(auto e, impl_->eventAt(stmt, 0));
    BS_RETURN_IF_ERROR(visit(e));
  }
}

Result<std::vector<trace_model::Event>> TraceReader::linkedEvents(int64_t runId, int32_t rank,
                                                                  int64_t correlationId) {
  BS_RETURN_IF_ERROR(impl_->follow());
  std::vector<trace_model::Event> out;
  if (correlationId == 0 || impl_->version() < 2) return out;
  if (impl_->version() >= kBlockSchemaVersion) {
    std::vector<StoredEvent> stored;
    BS_RETURN_IF_ERROR(linkedStoredEvents(impl_->db(), runId, rank, correlationId, stored));
    out.resize(stored.size());
    for (size_t i = 0; i < stored.size(); ++i) {
      BS_RETURN_IF_ERROR(impl_->toEventNamed(stored[i], rank, out[i]));
    }
    return out;
  }
  // `correlation != 0` lets SQLite use the partial index events_by_correlation.
  const std::string sql = "SELECT " + impl_->columns() +
                          " FROM events WHERE run = ? AND rank = ? AND correlation = ? "
                          "AND correlation != 0 ORDER BY start_ns, id";
  BS_ASSIGN_OR_RETURN(auto stmt, impl_->db().prepare(sql));
  stmt.bind(1, runId);
  stmt.bind(2, int64_t{rank});
  stmt.bind(3, correlationId);
  while (true) {
    auto more = stmt.step();
    if (!more.isOk()) return more.status();
    if (!*more) return out;
    BS_ASSIGN_OR_RETURN(auto e, impl_->eventAt(stmt, 0));
    out.push_back(std::move(e));
  }
}

Result<std::vector<StepSpan>> TraceReader::stepSpans(int64_t runId) {
  BS_RETURN_IF_ERROR(impl_->follow());
  std::vector<StepSpan> out;
  // The writer keeps event_steps as it appends; files from before it had
  // that table are aggregated from the events (a scan of the whole run).
  bool summarized = false;
  BS_RETURN_IF_ERROR(impl_->query(
      "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'event_steps'",
      [](SqliteStatement&) {}, [&](SqliteStatement& s) { summarized = s.columnInt(0) > 0; }));
  if (!summarized && impl_->version() >= kBlockSchemaVersion) {
    BS_ASSIGN_OR_RETURN(auto ranks, this->ranks(runId));
    return impl_->stepSpansFromBlocks(runId, ranks);
  }
  BS_RETURN_IF_ERROR(impl_->query(
      summarized ? "SELECT rank, step, first_ns, last_ns FROM event_steps WHERE run = ? "
                   "ORDER BY rank, step"
                 : "SELECT rank, step, MIN(start_ns), MAX(end_ns) FROM events WHERE run = ? "
                   "AND step >= 0 GROUP BY rank, step ORDER BY rank, step",
      [&](SqliteStatement& s) { s.bind(1, runId); },
      [&](SqliteStatement& s) -> Status {
        BS_ASSIGN_OR_RETURN(const int32_t rank, impl_->rankAt(s, 0));
        out.push_back(
            {rank, {static_cast<int32_t>(s.columnInt(1)), s.columnInt(2), s.columnInt(3)}});
        return Status::ok();
      }));
  return out;
}

Result<std::vector<SeriesPeak>> TraceReader::samplePeaks(int64_t runId, const std::string& name) {
  BS_RETURN_IF_ERROR(impl_->follow());
  std::vector<SeriesPeak> out;
  BS_RETURN_IF_ERROR(impl_->query(
      "SELECT rank, MAX(value) FROM samples WHERE run = ?1 "
      "AND name = (SELECT id FROM strings WHERE value = ?2) GROUP BY rank ORDER BY rank",
      [&](SqliteStatement& s) {
        s.bind(1, runId);
        s.bind(2, std::string_view(name));
      },
      [&](SqliteStatement& s) -> Status {
        BS_ASSIGN_OR_RETURN(const int32_t rank, impl_->rankAt(s, 0));
        out.push_back({rank, s.columnDouble(1)});
        return Status::ok();
      }));
  return out;
}

Result<std::pair<int64_t, int64_t>> TraceReader::timeRange(int64_t runId) {
  BS_RETURN_IF_ERROR(impl_->follow());
  std::pair<int64_t, int64_t> range{0, 0};
  BS_RETURN_IF_ERROR(impl_->query(
      "SELECT first_ns, last_ns FROM runs WHERE id = ?",
      [&](SqliteStatement& s) { s.bind(1, runId); },
      [&](SqliteStatement& s) {
        range = {s.columnInt(0), s.columnInt(1)};
      }));
  return range;
}

}  // namespace bubblescope::storage
