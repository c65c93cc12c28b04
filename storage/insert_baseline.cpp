#include "storage/insert_baseline.h"

#include "storage/event_rows.h"
#include "storage/sqlite_db.h"

namespace bubblescope::storage {
namespace {

// The v5 events table and its time index (schema.cpp, kSchemaV1 + v2, v5).
constexpr const char* kBaselineTable = R"sql(
CREATE TABLE IF NOT EXISTS baseline_events (
  id INTEGER PRIMARY KEY, run INTEGER NOT NULL, rank INTEGER NOT NULL, lane INTEGER NOT NULL,
  kind INTEGER NOT NULL, name INTEGER NOT NULL, start_ns INTEGER NOT NULL,
  end_ns INTEGER NOT NULL, step INTEGER NOT NULL, micro_batch INTEGER NOT NULL,
  stage INTEGER NOT NULL, chunk INTEGER NOT NULL, dim INTEGER NOT NULL, bytes INTEGER NOT NULL,
  flops INTEGER NOT NULL, peer INTEGER NOT NULL, correlation INTEGER NOT NULL DEFAULT 0,
  cpu_ns INTEGER NOT NULL DEFAULT -1);
CREATE INDEX IF NOT EXISTS baseline_events_by_rank_time ON baseline_events (run, rank, start_ns);
)sql";

}  // namespace

Status insertEventsBaseline(const std::string& path, int64_t runId,
                            std::span<const trace_model::Event> events, int64_t nameCount) {
  if (nameCount < 1) return Status::invalidArgument("insert baseline: nameCount must be >= 1");
  BS_ASSIGN_OR_RETURN(auto db, SqliteDb::open(path, SqliteDb::Mode::kReadWriteCreate));
  BS_RETURN_IF_ERROR(db->exec("PRAGMA synchronous=NORMAL"));
  BS_RETURN_IF_ERROR(db->exec(kBaselineTable));
  BS_RETURN_IF_ERROR(db->exec("BEGIN"));
  std::string insertSql = "INSERT INTO baseline_events(run, " + eventRowInsertColumns() + ") VALUES (?";
  for (int i = 0; i < eventRowColumnCount(); ++i) insertSql += ",?";
  BS_ASSIGN_OR_RETURN(SqliteStatement insert, db->prepare(insertSql + ")"));
  for (size_t i = 0; i < events.size(); ++i) {
    insert.bind(1, runId);
    bindEventRow(insert, 2, events[i], 1 + static_cast<int64_t>(i) % nameCount);
    BS_RETURN_IF_ERROR(insert.run());
  }
  return db->exec("COMMIT");
}

}  // namespace bubblescope::storage
