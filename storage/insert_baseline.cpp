#include "storage/insert_baseline.h"

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

constexpr const char* kInsertSql =
    "INSERT INTO baseline_events(run, rank, lane, kind, name, start_ns, end_ns, step, "
    "micro_batch, stage, chunk, dim, bytes, flops, peer, correlation, cpu_ns) "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

void bindEventRow(SqliteStatement& s, int64_t runId, const trace_model::Event& e, int64_t nameId) {
  s.bind(1, runId);
  s.bind(2, int64_t{e.rank});
  s.bind(3, int64_t{static_cast<int32_t>(e.lane)});
  s.bind(4, int64_t{static_cast<int32_t>(e.kind)});
  s.bind(5, nameId);
  s.bind(6, e.startNs);
  s.bind(7, e.endNs);
  s.bind(8, int64_t{e.step});
  s.bind(9, int64_t{e.microBatch});
  s.bind(10, int64_t{e.stage});
  s.bind(11, int64_t{e.chunk});
  s.bind(12, int64_t{static_cast<int32_t>(e.dim)});
  s.bind(13, e.bytes);
  s.bind(14, e.flops);
  s.bind(15, int64_t{e.peer});
  s.bind(16, e.correlationId);
  s.bind(17, e.cpuNs);
}

}  // namespace

Status insertEventsBaseline(const std::string& path, int64_t runId,
                            std::span<const trace_model::Event> events, int64_t nameCount) {
  if (nameCount < 1) return Status::invalidArgument("insert baseline: nameCount must be >= 1");
  BS_ASSIGN_OR_RETURN(auto db, SqliteDb::open(path, SqliteDb::Mode::kReadWriteCreate));
  BS_RETURN_IF_ERROR(db->exec("PRAGMA synchronous=NORMAL"));
  BS_RETURN_IF_ERROR(db->exec(kBaselineTable));
  BS_RETURN_IF_ERROR(db->exec("BEGIN"));
  BS_ASSIGN_OR_RETURN(SqliteStatement insert, db->prepare(kInsertSql));
  for (size_t i = 0; i < events.size(); ++i) {
    bindEventRow(insert, runId, events[i], 1 + static_cast<int64_t>(i) % nameCount);
    BS_RETURN_IF_ERROR(insert.run());
  }
  return db->exec("COMMIT");
}

}  // namespace bubblescope::storage
