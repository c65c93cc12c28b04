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

namespace bubblescope::storage {
namespace {

// A run on another host whose heartbeat is older than this is taken as gone.
constexpr int64_t kRemoteHeartbeatTimeoutNs = 60LL * 1000000000LL;

// The first schema that stores events in blocks (event_block.h); older
// files have a row per event, read through eventColumns().

// The columns eventAt() reads; v1 files have no correlation column.
std::string eventColumns(int32_t version) {
  return std::string(
             "rank, lane, kind, name, start_ns, end_ns, step, micro_batch, stage, chunk, "
             "dim, bytes, flops, peer, ") +
         (version >= 2 ? "correlation" : "0") + (version >= 5 ? ", cpu_ns" : ", -1");
}

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

class TraceReader::Impl {
 public:
  Impl(std::string path, ReadingConnection c)
      : path_(std::move(path)),
        db_(std::move(c.db)),
        immutable_(c.immutable),
        version_(c.schemaVersion),
        eventColumns_(eventColumns(c.schemaVersion)) {}

  // Called first by every query: an immutable connection (trace_file_access.h)
  // is read only while no writer exists; once a -wal or -shm appears, the
  // reader continues through them. The immutable connection stays open for
  // statements still running on it (a visitor may query the reader).
  Status follow() {
    BS_RETURN_IF_ERROR(followMigration());
    if (!immutable_ || !walFilesExist(path_)) return Status::ok();
    BS_ASSIGN_OR_RETURN(ReadingConnection c, openForReading(path_));
    BS_RETURN_IF_ERROR(configure(*c.db));
    retired_ = std::move(db_);
    db_ = std::move(c.db);
    immutable_ = c.immutable;
    return Status::ok();
  }

  // A writer may migrate an older file while it is read: from v6 on the
  // events are in blocks and the rows of older files are gone, so a reader of
  // an older file checks the version before each query (one meta row).
  Status followMigration() {
    if (version_ >= kBlockSchemaVersion) return Status::ok();
    int32_t now = version_;
    BS_RETURN_IF_ERROR(query(
        "SELECT value FROM meta WHERE key = 'schema_version'", [](SqliteStatement&) {},
        [&](SqliteStatement& s) { now = std::atoi(s.columnText(0).c_str()); }));
    if (now > version_ && now <= kSchemaVersion) {
      version_ = now;
      eventColumns_ = eventColumns(now);
    }
    return Status::ok();
  }

  // Window queries jump from the time index into the blocks: map the first
  // 128 MiB of the file instead of copying pages through read(), and keep a
  // 16 MiB page cache for the pages beyond. Both are bounded so that reading
  // a whole big file (the analysis of 100M events reads 1.3 GB of blocks, one
  // connection per thread) does not keep it resident in the reading process.
  static Status configure(SqliteDb& db) {
    return db.exec("PRAGMA mmap_size=134217728; PRAGMA cache_size=-16384");
  }

  int32_t version() const { return version_; }
  const std::string& path() const { return path_; }
  const std::string& columns() const { return eventColumns_; }
  SqliteDb& db() { return *db_; }

  // Runs `sql` with `bind` applied and calls `row` for each result row; a
  // `row` that returns a Status stops the query at its first error.
  template <class Bind, class Row>
  Status query(std::string_view sql, Bind&& bind, Row&& row) {
    BS_ASSIGN_OR_RETURN(auto stmt, db_->prepare(sql));
    bind(stmt);
    while (true) {
      auto more = stmt.step();
      if (!more.isOk()) return more.status();
      if (!*more) return Status::ok();
      if constexpr (std::is_void_v<std::invoke_result_t<Row&, SqliteStatement&>>) {
        row(stmt);
      } else {
        BS_RETURN_IF_ERROR(row(stmt));
      }
    }
  }

  // A rank column: 0 .. 2^31 - 1, or the file is corrupt (a rank id such as
  // 2^40 must not wrap to another rank).
  Result<int32_t> rankAt(SqliteStatement& s, int column) const {
    const int64_t rank = s.columnInt(column);
    if (rank < 0 || rank > std::numeric_limits<int32_t>::max()) {
      return Status::corrupt(db_->path() + " is corrupt: rank " + std::to_string(rank) +
                             " is outside 0.." +
                             std::to_string(std::numeric_limits<int32_t>::max()));
    }
    return static_cast<int32_t>(rank);
  }

  Result<std::string> stringById(int64_t id) {
    if (auto it = strings_.find(id); it != strings_.end()) return it->second;
    std::optional<std::string> value;
    BS_RETURN_IF_ERROR(query(
        "SELECT value FROM strings WHERE id = ?", [&](SqliteStatement& s) { s.bind(1, id); },
        [&](SqliteStatement& s) { value = s.columnText(0); }));
    if (!value) {
      return Status::corrupt(db_->path() + " is corrupt: string id " + std::to_string(id) +
                             " is missing");
    }
    strings_.emplace(id, *value);
    return *value;
  }

  // The event of `rank` stored as `s` (a v6 block's event).
  Status toEventNamed(const StoredEvent& s, int32_t rank, trace_model::Event& e) {
    toEvent(s, rank, e);
    if (auto it = strings_.find(s.nameId); it != strings_.end()) {
      e.name = it->second;
      return Status::ok();
    }
    BS_ASSIGN_OR_RETURN(e.name, stringById(s.nameId));
    return Status::ok();
  }

  // Reads an event row laid out as columns() starting at column `first`.
  Result<trace_model::Event> eventAt(SqliteStatement& s, int first) {
    trace_model::Event e;
    BS_ASSIGN_OR_RETURN(e.rank, rankAt(s, first + 0));
    e.lane = static_cast<trace_model::Lane>(s.columnInt(first + 1));
    e.kind = static_cast<trace_model::EventKind>(s.columnInt(first + 2));
    BS_ASSIGN_OR_RETURN(e.name, stringById(s.columnInt(first + 3)));
    e.startNs = s.columnInt(first + 4);
    e.endNs = s.columnInt(first + 5);
    e.step = static_cast<int32_t>(s.columnInt(first + 6));
    e.microBatch = static_cast<int32_t>(s.columnInt(first + 7));
    e.stage = static_cast<int32_t>(s.columnInt(first + 8));
    e.chunk = static_cast<int32_t>(s.columnInt(first + 9));
    e.dim = static_cast<trace_model::ParallelDim>(s.columnInt(first + 10));
    e.bytes = s.columnInt(first + 11);
    e.flops = s.columnInt(first + 12);
    e.peer = static_cast<int32_t>(s.columnInt(first + 13));
    e.correlationId = s.columnInt(first + 14);
    e.cpuNs = s.columnInt(first + 15);
    return e;
  }

  // eventsInWindow on a file that stores events in blocks (schema v6).
  Result<std::vector<trace_model::Event>> eventBlocksInWindow(int64_t runId,
                                                              const std::vector<int32_t>& ranks,
                                                              int64_t t0Ns, int64_t t1Ns) {
    // A block overlapping the window starts no earlier than t0 minus the
    // longest block of the run, so the (run, rank, first_start_ns) index bounds it.
    int64_t maxBlockNs = 0;
    BS_RETURN_IF_ERROR(query(
        "SELECT max_block_ns FROM runs WHERE id = ?", [&](SqliteStatement& s) { s.bind(1, runId); },
        [&](SqliteStatement& s) { maxBlockNs = s.columnInt(0); }));
    BlockRange range;
    range.firstStartFrom = t0Ns > std::numeric_limits<int64_t>::min() + maxBlockNs
                               ? t0Ns - maxBlockNs
                               : std::numeric_limits<int64_t>::min();
    range.firstStartBefore = t1Ns;
    range.endAfter = t0Ns;
    std::vector<trace_model::Event> out;
    for (int32_t rank : ranks) {
      BS_RETURN_IF_ERROR(
          visitRankBlocks(db(), runId, rank, range, [&](const StoredEvent& s) -> Status {
            if (s.startNs >= t1Ns || s.endNs <= t0Ns) return Status::ok();
            return toEventNamed(s, rank, out.emplace_back());
          }));
    }
    return out;
  }

  // stepSpans of a v6 file without event_steps: a scan of the run's blocks.
  Result<std::vector<StepSpan>> stepSpansFromBlocks(int64_t runId,
                                                    const std::vector<RankInfo>& ranks) {
    std::vector<StepSpan> out;
    for (const RankInfo& r : ranks) {
      std::map<int32_t, trace_model::StepWindow> windows;
      BS_RETURN_IF_ERROR(visitRankBlocks(db(), runId, r.rank, {}, [&](const StoredEvent& e) {
        if (e.step < 0) return Status::ok();
        auto [it, added] =
            windows.try_emplace(e.step, trace_model::StepWindow{e.step, e.startNs, e.endNs});
        it->second.startNs = std::min(it->second.startNs, e.startNs);
        it->second.endNs = std::max(it->second.endNs, e.endNs);
        return Status::ok();
      }));
      for (const auto& [step, window] : windows) out.push_back({r.rank, window});
    }
    return out;
  }

 private:
  std::string path_;
  std::unique_ptr<SqliteDb> db_;
  std::unique_ptr<SqliteDb> retired_;  // the immutable connection, after follow()
  bool immutable_;
  int32_t version_;  // a writer may migrate the file meanwhile: older columns still read
  std::string eventColumns_;
  std::unordered_map<int64_t, std::string> strings_;
};

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
  // `+run` keeps SQLite off events_by_rank_time: with it, every page scanned
  // all the run's index entries and sorted them by id (quadratic in the run's
  // events); the rowid range reads just the page.
  const std::string sql = "SELECT id, " + impl_->columns() +
                          " FROM events WHERE id > ? AND +run = ? ORDER BY id LIMIT ?";
  BS_ASSIGN_OR_RETURN(auto stmt, impl_->db().prepare(sql));
  stmt.bind(1, cursor);
  stmt.bind(2, runId);
  stmt.bind(3, limit);
  while (true) {
    auto more = stmt.step();
    if (!more.isOk()) return more.status();
    if (!*more) break;
    page.cursor = stmt.columnInt(0);
    BS_ASSIGN_OR_RETURN(auto e, impl_->eventAt(stmt, 1));
    page.events.push_back(std::move(e));
  }
  return page;
}

Result<SpanPage> TraceReader::spansAfter(int64_t runId, int64_t cursor, int64_t limit) {
  BS_RETURN_IF_ERROR(impl_->follow());
  SpanPage page;
  auto span = [](int32_t rank, int64_t startNs, int64_t endNs, int32_t lane, int32_t kind,
                 int32_t dim, int32_t chunk) {
    EventSpan s;
    s.startNs = startNs;
    s.endNs = endNs;
    s.rank = rank;
    s.chunk = chunk;
    s.lane = static_cast<trace_model::Lane>(lane);
    s.kind = static_cast<trace_model::EventKind>(kind);
    s.dim = static_cast<trace_model::ParallelDim>(dim);
    return s;
  };
  if (impl_->version() >= kBlockSchemaVersion) {
    page.cursor = cursor;
    std::vector<StoredEvent> stored;
    std::vector<int32_t> ranks;
    BS_RETURN_IF_ERROR(storedEventsAfter(impl_->db(), runId, page.cursor, limit, stored, ranks));
    page.spans.reserve(stored.size());
    for (size_t i = 0; i < stored.size(); ++i) {
      const StoredEvent& e = stored[i];
      page.spans.push_back(span(ranks[i], e.startNs, e.endNs, e.lane, e.kind, e.dim, e.chunk));
    }
    return page;
  }
  BS_ASSIGN_OR_RETURN(EventPage events, eventsAfter(runId, cursor, limit));
  page.cursor = events.cursor;
  page.spans.reserve(events.events.size());
  for (const trace_model::Event& e : events.events) {
    page.spans.push_back(span(e.rank, e.startNs, e.endNs, static_cast<int32_t>(e.lane),
                              static_cast<int32_t>(e.kind), static_cast<int32_t>(e.dim), e.chunk));
  }
  return page;
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
