#include "storage/trace_writer.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "storage/event_block_table.h"
#include "storage/process_identity.h"
#include "storage/schema.h"
#include "storage/sqlite_db.h"

namespace bubblescope::storage {
namespace {

// Tries of the switch to WAL against a concurrent creator, 1 ms apart: the
// 5 s of SqliteDb's busy timeout.
constexpr int kWalSwitchTries = 5000;

// Monotonic time for the age of a transaction (not a trace time).
int64_t steadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string directoryOf(const std::string& path) {
  auto parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

Status checkEvent(const trace_model::Event& e) {
  if (e.rank < 0) {
    return Status::invalidArgument("event '" + e.name + "' has rank " + std::to_string(e.rank) +
                                   ": ranks are 0 or more");
  }
  if (e.endNs < e.startNs) {
    return Status::invalidArgument("event '" + e.name + "' of rank " + std::to_string(e.rank) +
                                   " ends before it starts (" + std::to_string(e.startNs) + " > " +
                                   std::to_string(e.endNs) + " ns)");
  }
  if (int64_t ns = 0; __builtin_sub_overflow(e.endNs, e.startNs, &ns)) {
    return Status::invalidArgument("event '" + e.name + "' of rank " + std::to_string(e.rank) +
                                   " lasts longer than 2^63 ns (" + std::to_string(e.startNs) +
                                   " to " + std::to_string(e.endNs) + " ns)");
  }
  if (!trace_model::isValid(e.kind) || !trace_model::isValid(e.dim)) {
    return Status::invalidArgument("event '" + e.name + "' has an unknown kind or dimension");
  }
  return Status::ok();
}

}  // namespace

class TraceWriter::Impl {
 public:
  Impl(std::unique_ptr<SqliteDb> db, WriterOptions options)
      : db_(std::move(db)), options_(options) {}

  Status prepareStatements() {
    BS_ASSIGN_OR_RETURN(insertBlock_, db_->prepare(kInsertBlockSql));
    BS_ASSIGN_OR_RETURN(insertStep_,
                        db_->prepare("INSERT OR REPLACE INTO steps(run, step, rank, loss, "
                                     "tokens, start_ns, end_ns) VALUES (?,?,?,?,?,?,?)"));
    BS_ASSIGN_OR_RETURN(insertSample_, db_->prepare("INSERT INTO samples(run, rank, name, "
                                                    "t_ns, value) VALUES (?,?,?,?,?)"));
    BS_ASSIGN_OR_RETURN(internInsert_,
                        db_->prepare("INSERT OR IGNORE INTO strings(value) VALUES (?)"));
    BS_ASSIGN_OR_RETURN(internSelect_, db_->prepare("SELECT id FROM strings WHERE value = ?"));
    BS_ASSIGN_OR_RETURN(
        upsertStep_,
        db_->prepare("INSERT INTO event_steps(run, rank, step, first_ns, last_ns) "
                     "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT(run, rank, step) DO UPDATE SET "
                     "first_ns = min(first_ns, excluded.first_ns), "
                     "last_ns = max(last_ns, excluded.last_ns)"));
    BS_ASSIGN_OR_RETURN(touchRank_,
                        db_->prepare("INSERT OR IGNORE INTO ranks(run, rank) VALUES (?, ?)"));
    BS_ASSIGN_OR_RETURN(progress_,
                        db_->prepare("UPDATE runs SET max_event_ns = ?, event_count = ?, "
                                     "heartbeat_unix_ns = ?, first_ns = ?, last_ns = ?, "
                                     "max_block_ns = ? WHERE id = ?"));
    return Status::ok();
  }

  Result<int64_t> beginRun(const RunInfo& info) {
    BS_RETURN_IF_ERROR(commit());
    if (runId_ != 0) {
      return Status::failedPrecondition("run " + std::to_string(runId_) +
                                        " is still open: finish it before beginning another");
    }
    const ProcessIdentity me = currentProcess();
    BS_ASSIGN_OR_RETURN(
        auto insert, db_->prepare("INSERT INTO runs(name, created_unix_ns, layout_json, "
                                  "model_json, backend, world_size, status, source, "
                                  "writer_host, writer_pid, writer_start_ticks, "
                                  "heartbeat_unix_ns) VALUES (?,?,?,?,?,?,'running',?,?,?,?,?)"));
    const int64_t now = unixNowNs();
    insert.bind(1, std::string_view(info.name));
    insert.bind(2, now);
    insert.bind(3, std::string_view(info.layoutJson.empty() ? "{}" : info.layoutJson));
    insert.bind(4, std::string_view(info.modelJson.empty() ? "{}" : info.modelJson));
    insert.bind(5, std::string_view(info.backend));
    insert.bind(6, int64_t{info.worldSize});
    insert.bind(7, std::string_view(sourceName(info)));
    insert.bind(8, std::string_view(me.host));
    insert.bind(9, me.pid);
    insert.bind(10, me.startTicks);
    insert.bind(11, now);
    BS_RETURN_IF_ERROR(insert.run().withContext("cannot begin a run"));
    runId_ = db_->lastInsertRowId();
    maxEventNs_ = 0;
    maxBlockNs_ = 0;
    eventCount_ = 0;
    rankSeen_.clear();
    return runId_;
  }

  Status attachRun(int64_t runId) {
    BS_RETURN_IF_ERROR(commit());
    if (runId_ != 0) {
      return Status::failedPrecondition("run " + std::to_string(runId_) +
                                        " is still open: finish it before attaching another");
    }
    BS_ASSIGN_OR_RETURN(auto query,
                        db_->prepare("SELECT status, max_event_ns, event_count, first_ns, "
                                     "last_ns, max_block_ns FROM runs WHERE id = ?"));
    query.bind(1, runId);
    auto row = query.step();
    if (!row.isOk()) return row.status();
    if (!*row) return Status::notFound("run " + std::to_string(runId) + " is not in " + path());
    if (query.columnText(0) != "running") {
      const std::string status = query.columnText(0);
      return Status::failedPrecondition("run " + std::to_string(runId) + " has already " +
                                        (status == "failed"    ? "failed"
                                         : status == "stopped" ? "been stopped"
                                                               : "finished"));
    }
    maxEventNs_ = query.columnInt(1);
    eventCount_ = query.columnInt(2);
    firstNs_ = query.columnInt(3);
    lastNs_ = query.columnInt(4);
    maxBlockNs_ = query.columnInt(5);
    query.reset();
    const ProcessIdentity me = currentProcess();
    BS_ASSIGN_OR_RETURN(auto update,
                        db_->prepare("UPDATE runs SET writer_host = ?, writer_pid = ?, "
                                     "writer_start_ticks = ?, heartbeat_unix_ns = ? WHERE id = ?"));
    update.bind(1, std::string_view(me.host));
    update.bind(2, me.pid);
    update.bind(3, me.startTicks);
    update.bind(4, unixNowNs());
    update.bind(5, runId);
    BS_RETURN_IF_ERROR(update.run());
    runId_ = runId;
    rankSeen_.clear();
    return Status::ok();
  }

  Status detachRun() {
    BS_RETURN_IF_ERROR(commit());
    runId_ = 0;
    rankSeen_.clear();
    return Status::ok();
  }

  Status endDetachedRun(int64_t runId, RunStatus status, const std::string& error) {
    if (runId == runId_) return finishRun(status, error);
    BS_RETURN_IF_ERROR(commit());
    BS_ASSIGN_OR_RETURN(auto update, db_->prepare("UPDATE runs SET status = ?, error = ?, "
                                                  "ended_unix_ns = ? WHERE id = ? AND "
                                                  "status = 'running'"));
    update.bind(1, std::string_view(toString(status)));
    update.bind(2, std::string_view(error));
    update.bind(3, unixNowNs());
    update.bind(4, runId);
    BS_RETURN_IF_ERROR(update.run());
    if (db_->changes() == 0) {
      return Status::failedPrecondition("run " + std::to_string(runId) +
                                        " is not a running run of " + path());
    }
    return Status::ok();
  }

  Status addRank(const RankInfo& r) {
    BS_RETURN_IF_ERROR(requireRun("addRank"));
    BS_RETURN_IF_ERROR(beginIfNeeded());
    BS_ASSIGN_OR_RETURN(auto insert,
                        db_->prepare("INSERT OR REPLACE INTO ranks(run, rank, host, pid, device, "
                                     "dp, tp, pp, clock_offset_ns, clock_uncertainty_ns, "
                                     "cores_on_host, ranks_on_host, parameters, "
                                     "gpu_clock_uncertainty_ns) "
                                     "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)"));
    insert.bind(1, runId_);
    insert.bind(2, int64_t{r.rank});
    insert.bind(3, std::string_view(r.host));
    insert.bind(4, r.pid);
    insert.bind(5, std::string_view(r.device));
    insert.bind(6, int64_t{r.dp});
    insert.bind(7, int64_t{r.tp});
    insert.bind(8, int64_t{r.pp});
    insert.bind(9, r.clockOffsetNs);
    insert.bind(10, r.clockUncertaintyNs);
    insert.bind(11, int64_t{r.coresOnHost});
    insert.bind(12, int64_t{r.ranksOnHost});
    insert.bind(13, r.parameters);
    insert.bind(14, r.gpuClockUncertaintyNs);
    BS_RETURN_IF_ERROR(insert.run());
    markRankSeen(r.rank);
    return Status::ok();
  }

  Status appendEvents(std::span<const trace_model::Event> events) {
    BS_RETURN_IF_ERROR(requireRun("appendEvents"));
    for (const auto& e : events) BS_RETURN_IF_ERROR(checkEvent(e));
    for (const auto& e : events) {
      BS_RETURN_IF_ERROR(beginIfNeeded());
      BS_RETURN_IF_ERROR(ensureRank(e.rank));
      BS_ASSIGN_OR_RETURN(const int64_t nameId, intern(e.name));
      std::vector<StoredEvent>& pending = pendingEvents_[e.rank];
      if (pending.empty()) pendingRanks_.push_back(e.rank);
      pending.push_back(storedEvent(e, nameId));
      if (e.step >= 0) noteStepSpan(e);
      maxEventNs_ = std::max(maxEventNs_, e.endNs - e.startNs);
      firstNs_ = eventCount_ == 0 ? e.startNs : std::min(firstNs_, e.startNs);
      lastNs_ = eventCount_ == 0 ? e.endNs : std::max(lastNs_, e.endNs);
      ++eventCount_;
      BS_RETURN_IF_ERROR(rowWritten());
    }
    return Status::ok();
  }

  Status appendSteps(std::span<const trace_model::StepRecord> steps) {
    BS_RETURN_IF_ERROR(requireRun("appendSteps"));
    for (const auto& r : steps) {
      BS_RETURN_IF_ERROR(beginIfNeeded());
      SqliteStatement& s = insertStep_.value();
      s.bind(1, runId_);
      s.bind(2, int64_t{r.step});
      s.bind(3, int64_t{r.rank});
      if (std::isnan(r.loss)) {
        s.bindNull(4);
      } else {
        s.bind(4, r.loss);
      }
      s.bind(5, r.tokens);
      s.bind(6, r.startNs);
      s.bind(7, r.endNs);
      BS_RETURN_IF_ERROR(s.run());
      BS_RETURN_IF_ERROR(rowWritten());
    }
    return Status::ok();
  }

  Status appendSamples(std::span<const trace_model::Sample> samples) {
    BS_RETURN_IF_ERROR(requireRun("appendSamples"));
    for (const auto& x : samples) {
      BS_RETURN_IF_ERROR(beginIfNeeded());
      BS_ASSIGN_OR_RETURN(const int64_t nameId, intern(x.name));
      SqliteStatement& s = insertSample_.value();
      s.bind(1, runId_);
      s.bind(2, int64_t{x.rank});
      s.bind(3, nameId);
      s.bind(4, x.timeNs);
      s.bind(5, x.value);
      BS_RETURN_IF_ERROR(s.run());
      BS_RETURN_IF_ERROR(rowWritten());
    }
    return Status::ok();
  }

  // Commits the open transaction, recording the run's progress with it.
  Status commit() {
    if (!inTransaction_) return Status::ok();
    BS_RETURN_IF_ERROR(writeBlocks());
    BS_RETURN_IF_ERROR(writeStepSpans());
    if (runId_ != 0) {
      SqliteStatement& p = progress_.value();
      p.bind(1, maxEventNs_);
      p.bind(2, eventCount_);
      p.bind(3, unixNowNs());
      p.bind(4, eventCount_ > 0 ? firstNs_ : 0);
      p.bind(5, eventCount_ > 0 ? lastNs_ : 0);
      p.bind(6, maxBlockNs_);
      p.bind(7, runId_);
      BS_RETURN_IF_ERROR(p.run());
    }
    Status s = db_->exec("COMMIT");
    if (!s.isOk()) {
      (void)db_->exec("ROLLBACK");
      strings_.clear();  // ids interned in the lost transaction are gone
      rankSeen_.clear();
    }
    inTransaction_ = false;
    rowsInTransaction_ = 0;
    return s.withContext("cannot commit a batch");
  }

  Status finishRun(RunStatus status, const std::string& error) {
    BS_RETURN_IF_ERROR(requireRun("finishRun"));
    BS_RETURN_IF_ERROR(beginIfNeeded());
    BS_ASSIGN_OR_RETURN(auto update, db_->prepare("UPDATE runs SET status = ?, error = ?, "
                                                  "ended_unix_ns = ? WHERE id = ?"));
    update.bind(1, std::string_view(toString(status)));
    update.bind(2, std::string_view(error));
    update.bind(3, unixNowNs());
    update.bind(4, runId_);
    BS_RETURN_IF_ERROR(update.run());
    BS_RETURN_IF_ERROR(commit());
    runId_ = 0;
    return Status::ok();
  }

  int64_t runId() const { return runId_; }

  const std::string& path() const { return db_->path(); }

 private:
  // The events of this transaction, per rank, stored as blocks when it
  // commits (event_block.h): sorted by start, so a rank's blocks of one
  // batch never overlap. Ranks go in the order their first event of the
  // batch came, so a reader following the file (eventsAfter) gets the
  // first appended event first.
  Status writeBlocks() {
    Status s;
    for (int32_t rank : pendingRanks_) {
      std::vector<StoredEvent>& events = pendingEvents_[rank];
      if (s.isOk()) s = insertRankBlocks(insertBlock_.value(), runId_, rank, events, maxBlockNs_);
      events.clear();
    }
    pendingRanks_.clear();
    return s;
  }

  // The first start and last end of each (rank, step) seen in this
  // transaction, merged into event_steps when it commits: readers get step
  // windows without scanning the events.
  void noteStepSpan(const trace_model::Event& e) {
    const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(e.rank)) << 32) |
                         static_cast<uint32_t>(e.step);
    auto [it, inserted] = pendingSteps_.try_emplace(key, e.startNs, e.endNs);
    if (!inserted) {
      it->second.first = std::min(it->second.first, e.startNs);
      it->second.second = std::max(it->second.second, e.endNs);
    }
  }

  Status writeStepSpans() {
    for (const auto& [key, span] : pendingSteps_) {
      SqliteStatement& u = upsertStep_.value();
      u.bind(1, runId_);
      u.bind(2, static_cast<int64_t>(static_cast<int32_t>(key >> 32)));
      u.bind(3, static_cast<int64_t>(static_cast<int32_t>(key & 0xffffffffu)));
      u.bind(4, span.first);
      u.bind(5, span.second);
      BS_RETURN_IF_ERROR(u.run());
    }
    pendingSteps_.clear();
    return Status::ok();
  }

  Status requireRun(const char* what) const {
    if (runId_ != 0) return Status::ok();
    return Status::failedPrecondition(std::string(what) + " needs a run: call beginRun first");
  }

  Status beginIfNeeded() {
    if (inTransaction_) return Status::ok();
    BS_RETURN_IF_ERROR(db_->exec("BEGIN IMMEDIATE").withContext("cannot start a batch"));
    inTransaction_ = true;
    rowsInTransaction_ = 0;
    transactionStartNs_ = steadyNowNs();
    return Status::ok();
  }

  // Commits by size, or by age (checked every 256 rows to keep clocks off
  // the per-row path).
  Status rowWritten() {
    ++rowsInTransaction_;
    if (rowsInTransaction_ >= options_.batchEvents) return commit();
    if ((rowsInTransaction_ & 255) == 0 &&
        steadyNowNs() - transactionStartNs_ >= options_.maxBatchMs * 1000000) {
      return commit();
    }
    return Status::ok();
  }

  Result<int64_t> intern(const std::string& value) {
    if (auto it = strings_.find(value); it != strings_.end()) return it->second;
    SqliteStatement& ins = internInsert_.value();
    ins.bind(1, std::string_view(value));
    BS_RETURN_IF_ERROR(ins.run());
    SqliteStatement& sel = internSelect_.value();
    sel.bind(1, std::string_view(value));
    auto row = sel.step();
    if (!row.isOk()) return row.status();
    if (!*row) {
      sel.reset();
      return Status::internal("string '" + value + "' vanished after insert");
    }
    const int64_t id = sel.columnInt(0);
    sel.reset();
    strings_.emplace(value, id);
    return id;
  }

  void markRankSeen(int32_t rank) {
    if (rank < 0) return;
    if (static_cast<size_t>(rank) >= rankSeen_.size()) rankSeen_.resize(rank + 1, false);
    rankSeen_[rank] = true;
  }

  // Every rank that has events has a row in `ranks`, so readers can list
  // ranks without scanning events.
  Status ensureRank(int32_t rank) {
    if (rank >= 0 && static_cast<size_t>(rank) < rankSeen_.size() && rankSeen_[rank]) {
      return Status::ok();
    }
    SqliteStatement& t = touchRank_.value();
    t.bind(1, runId_);
    t.bind(2, int64_t{rank});
    BS_RETURN_IF_ERROR(t.run());
    markRankSeen(rank);
    return Status::ok();
  }

  std::unique_ptr<SqliteDb> db_;
  WriterOptions options_;
  std::optional<SqliteStatement> insertBlock_, insertStep_, insertSample_, internInsert_,
      internSelect_, touchRank_, progress_, upsertStep_;
  std::unordered_map<std::string, int64_t> strings_;
  std::unordered_map<uint64_t, std::pair<int64_t, int64_t>> pendingSteps_;  // (rank, step)
  std::unordered_map<int32_t, std::vector<StoredEvent>> pendingEvents_;     // by rank
  std::vector<int32_t> pendingRanks_;  // ranks with pending events, first come first
  std::vector<bool> rankSeen_;
  int64_t runId_ = 0;
  int64_t maxEventNs_ = 0;
  int64_t maxBlockNs_ = 0;  // longest block: latest end minus first start
  int64_t eventCount_ = 0;
  int64_t firstNs_ = 0;  // earliest start of the run's events
  int64_t lastNs_ = 0;   // latest end of the run's events
  bool inTransaction_ = false;
  int64_t rowsInTransaction_ = 0;
  int64_t transactionStartNs_ = 0;
};

Result<std::unique_ptr<TraceWriter>> TraceWriter::open(const std::string& path,
                                                       WriterOptions options) {
  // stat() only: no descriptor of the file is opened outside SQLite
  // (trace_file_access.h); the header is read through SQLite's.
  std::error_code ec;
  const bool exists = std::filesystem::exists(path, ec);
  const bool fresh = !exists || std::filesystem::file_size(path, ec) == 0;
  if (!fresh) BS_RETURN_IF_ERROR(checkTracePath(path));
  auto opened = SqliteDb::open(path, SqliteDb::Mode::kReadWriteCreate);
  if (!opened.isOk()) {
    const std::string dir = directoryOf(path);
    if (::access(dir.c_str(), W_OK) != 0) {
      return Status::ioError("cannot create trace file " + path + ": directory " + dir +
                             " is not writable (" + std::strerror(errno) + ")");
    }
    return opened.status();
  }
  std::unique_ptr<SqliteDb> db = std::move(opened).value();
  if (!fresh) {
    // Another program's database is refused before anything is written to
    // it (WAL mode would change its header); one with nothing committed is
    // a trace being created (createOrCheckSchema takes it over).
    BS_RETURN_IF_ERROR(checkFileHeader(*db));
    int32_t version = 0;
    const Status trace = checkTraceDatabase(*db, &version);
    if (!trace.isOk() && trace.code() != StatusCode::kFailedPrecondition) return trace;
  }
  // Two creators of one new file both hold a shared lock when they switch it
  // to WAL, which needs it alone: SQLite answers the one that would deadlock
  // SQLITE_BUSY at once, without its busy handler. That one lets go (the
  // failed statement released its lock) and tries again, for as long as the
  // busy timeout would have waited.
  Status wal = db->exec("PRAGMA journal_mode=WAL");
  for (int tries = 1; !wal.isOk() && db->lastFailureWasBusy() && tries < kWalSwitchTries;
       ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    wal = db->exec("PRAGMA journal_mode=WAL");
  }
  if (!wal.isOk() && !fresh) return wal;
  if (!wal.isOk()) {
    const std::string dir = directoryOf(path);
    return Status::ioError(
        "cannot create trace file " + path + ": " + wal.message() +
        (::access(dir.c_str(), W_OK) != 0 ? " (directory " + dir + " is not writable)" : ""));
  }
  // Under the write lock: a concurrent creator's schema is found, not made
  // twice ("table meta already exists").
  BS_ASSIGN_OR_RETURN(const int32_t version, createOrCheckSchema(*db));
  if (version < kSchemaVersion) BS_RETURN_IF_ERROR(migrateSchema(*db));
  // WAL + NORMAL: a committed batch survives the death of the process.
  BS_RETURN_IF_ERROR(db->exec("PRAGMA synchronous=NORMAL"));
  auto impl = std::make_unique<Impl>(std::move(db), options);
  BS_RETURN_IF_ERROR(impl->prepareStatements());
  return std::unique_ptr<TraceWriter>(new TraceWriter(std::move(impl)));
}

TraceWriter::TraceWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TraceWriter::~TraceWriter() {
  (void)impl_->commit();
}

Result<int64_t> TraceWriter::beginRun(const RunInfo& info) {
  return impl_->beginRun(info);
}
Status TraceWriter::attachRun(int64_t runId) {
  return impl_->attachRun(runId);
}
Status TraceWriter::detachRun() {
  return impl_->detachRun();
}
Status TraceWriter::endDetachedRun(int64_t runId, RunStatus status, const std::string& error) {
  return impl_->endDetachedRun(runId, status, error);
}
Status TraceWriter::addRank(const RankInfo& rank) {
  return impl_->addRank(rank);
}
Status TraceWriter::appendEvents(std::span<const trace_model::Event> events) {
  return impl_->appendEvents(events);
}
Status TraceWriter::appendSteps(std::span<const trace_model::StepRecord> steps) {
  return impl_->appendSteps(steps);
}
Status TraceWriter::appendSamples(std::span<const trace_model::Sample> samples) {
  return impl_->appendSamples(samples);
}
Status TraceWriter::flush() {
  return impl_->commit();
}
Status TraceWriter::finishRun(RunStatus status, const std::string& error) {
  return impl_->finishRun(status, error);
}
int64_t TraceWriter::currentRunId() const {
  return impl_->runId();
}
const std::string& TraceWriter::path() const {
  return impl_->path();
}

}  // namespace bubblescope::storage
