// TraceReader::Impl: the reader's SQLite connection (following a writer's
// WAL, and a migration to a newer schema while it reads), its string table
// and the decoding of event rows and event blocks. Private to
// storage/trace_reader.cpp; its queries are TraceReader's methods.
// Older files (before event blocks, event_block.h) have a row per event, read
// with the columns eventColumnsOf() names.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "storage/event_block_reader.h"
#include "storage/event_rows.h"
#include "storage/schema.h"
#include "storage/sqlite_db.h"
#include "storage/trace_file_access.h"
#include "storage/trace_reader.h"

namespace bubblescope::storage {

class TraceReader::Impl {
 public:
  Impl(std::string path, ReadingConnection c)
      : path_(std::move(path)),
        db_(std::move(c.db)),
        immutable_(c.immutable),
        version_(c.schemaVersion),
        eventColumns_(eventColumnsOf(c.schemaVersion)) {}

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
      eventColumns_ = eventColumnsOf(now);
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
    return checkedRank(s.columnInt(column));
  }
  Result<int32_t> checkedRank(int64_t rank) const {
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
    int64_t rank = 0;
    StoredEvent stored;
    readEventRow(s, first, rank, stored);
    trace_model::Event e;
    BS_ASSIGN_OR_RETURN(const int32_t r, checkedRank(rank));
    BS_RETURN_IF_ERROR(toEventNamed(stored, r, e));
    return e;
  }

  // The event rows of a file from before blocks (schema < 6) with ids after
  // `cursor`, at most `limit`, in id order: `each` gets each row's checked
  // rank and fields, `lastId` the last id read. `+run` keeps SQLite off
  // events_by_rank_time: with it, every page scanned all the run's index
  // entries and sorted them by id (quadratic in the run's events); the rowid
  // range reads just the page.
  Status rowsAfter(int64_t runId, int64_t cursor, int64_t limit, int64_t& lastId,
                   const std::function<Status(int32_t rank, const StoredEvent&)>& each) {
    const std::string sql =
        "SELECT id, " + columns() + " FROM events WHERE id > ? AND +run = ? ORDER BY id LIMIT ?";
    BS_ASSIGN_OR_RETURN(auto stmt, db().prepare(sql));
    stmt.bind(1, cursor);
    stmt.bind(2, runId);
    stmt.bind(3, limit);
    while (true) {
      auto more = stmt.step();
      if (!more.isOk()) return more.status();
      if (!*more) return Status::ok();
      lastId = stmt.columnInt(0);
      int64_t rank = 0;
      StoredEvent stored;
      readEventRow(stmt, 1, rank, stored);
      BS_ASSIGN_OR_RETURN(const int32_t r, checkedRank(rank));
      BS_RETURN_IF_ERROR(each(r, stored));
    }
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
  // The columns eventAt() reads (event_rows.h).
  static std::string eventColumnsOf(int32_t version) { return eventRowColumns(version); }

  std::string path_;
  std::unique_ptr<SqliteDb> db_;
  std::unique_ptr<SqliteDb> retired_;  // the immutable connection, after follow()
  bool immutable_;
  int32_t version_;  // a writer may migrate the file meanwhile: older columns still read
  std::string eventColumns_;
  std::unordered_map<int64_t, std::string> strings_;
};

}  // namespace bubblescope::storage
