#include "storage/schema.h"

#include <sys/stat.h>

#include <cstring>
#include <iterator>

#include "common/result.h"
#include "storage/event_block_table.h"
#include "storage/sqlite_db.h"

namespace bubblescope::storage {
namespace {

// The v1 schema as it was; later versions are the migrations below.
// Times are integer ns on the run's aligned timeline; -1 = not applicable.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE strings (
  id INTEGER PRIMARY KEY,
  value TEXT NOT NULL UNIQUE
);
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  created_unix_ns INTEGER NOT NULL,
  ended_unix_ns INTEGER NOT NULL DEFAULT 0,
  layout_json TEXT NOT NULL,
  model_json TEXT NOT NULL,
  backend TEXT NOT NULL,
  world_size INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'failed')),
  error TEXT NOT NULL DEFAULT '',
  source TEXT NOT NULL CHECK (source IN ('measured', 'simulated')),
  writer_host TEXT NOT NULL,
  writer_pid INTEGER NOT NULL,
  writer_start_ticks INTEGER NOT NULL,
  heartbeat_unix_ns INTEGER NOT NULL,
  max_event_ns INTEGER NOT NULL DEFAULT 0,
  event_count INTEGER NOT NULL DEFAULT 0,
  first_ns INTEGER NOT NULL DEFAULT 0,
  last_ns INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE ranks (
  run INTEGER NOT NULL REFERENCES runs(id),
  rank INTEGER NOT NULL,
  host TEXT NOT NULL DEFAULT '',
  pid INTEGER NOT NULL DEFAULT 0,
  device TEXT NOT NULL DEFAULT 'cpu',
  dp INTEGER NOT NULL DEFAULT 0,
  tp INTEGER NOT NULL DEFAULT 0,
  pp INTEGER NOT NULL DEFAULT 0,
  clock_offset_ns INTEGER NOT NULL DEFAULT 0,
  clock_uncertainty_ns INTEGER NOT NULL DEFAULT 0,
  cores_on_host INTEGER NOT NULL DEFAULT 0,
  ranks_on_host INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (run, rank)
) WITHOUT ROWID;
CREATE TABLE events (
  id INTEGER PRIMARY KEY,
  run INTEGER NOT NULL,
  rank INTEGER NOT NULL,
  lane INTEGER NOT NULL,
  kind INTEGER NOT NULL,
  name INTEGER NOT NULL,
  start_ns INTEGER NOT NULL,
  end_ns INTEGER NOT NULL,
  step INTEGER NOT NULL,
  micro_batch INTEGER NOT NULL,
  stage INTEGER NOT NULL,
  chunk INTEGER NOT NULL,
  dim INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  flops INTEGER NOT NULL,
  peer INTEGER NOT NULL
);
CREATE INDEX events_by_rank_time ON events (run, rank, start_ns);
CREATE TABLE event_steps (
  run INTEGER NOT NULL,
  rank INTEGER NOT NULL,
  step INTEGER NOT NULL,
  first_ns INTEGER NOT NULL,
  last_ns INTEGER NOT NULL,
  PRIMARY KEY (run, rank, step)
) WITHOUT ROWID;
CREATE TABLE steps (
  run INTEGER NOT NULL,
  step INTEGER NOT NULL,
  rank INTEGER NOT NULL,
  loss REAL,
  tokens INTEGER NOT NULL,
  start_ns INTEGER NOT NULL,
  end_ns INTEGER NOT NULL,
  PRIMARY KEY (run, step, rank)
) WITHOUT ROWID;
CREATE TABLE samples (
  run INTEGER NOT NULL,
  rank INTEGER NOT NULL,
  name INTEGER NOT NULL,
  t_ns INTEGER NOT NULL,
  value REAL NOT NULL
);
CREATE INDEX samples_by_series ON samples (run, rank, name, t_ns);
)sql";

// Migration from version N to N + 1 is kMigrations[N - 1]. Statements add
// (ADD COLUMN with a default is O(1) in SQLite: old rows read the default),
// or rebuild the small runs table where SQLite cannot alter a CHECK.
constexpr const char* kMigrations[] = {
    // v1 -> v2: launch correlation. The index holds only linked events.
    R"sql(
ALTER TABLE events ADD COLUMN correlation INTEGER NOT NULL DEFAULT 0;
CREATE INDEX events_by_correlation ON events (run, rank, correlation) WHERE correlation != 0;
ALTER TABLE ranks ADD COLUMN parameters INTEGER NOT NULL DEFAULT 0;
)sql",
    // v2 -> v3: runs.status may be 'stopped' (runs.status in
    // docs/trace-format.md). Same columns in the same order.
    R"sql(
CREATE TABLE runs_v3 (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  created_unix_ns INTEGER NOT NULL,
  ended_unix_ns INTEGER NOT NULL DEFAULT 0,
  layout_json TEXT NOT NULL,
  model_json TEXT NOT NULL,
  backend TEXT NOT NULL,
  world_size INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'failed', 'stopped')),
  error TEXT NOT NULL DEFAULT '',
  source TEXT NOT NULL CHECK (source IN ('measured', 'simulated')),
  writer_host TEXT NOT NULL,
  writer_pid INTEGER NOT NULL,
  writer_start_ticks INTEGER NOT NULL,
  heartbeat_unix_ns INTEGER NOT NULL,
  max_event_ns INTEGER NOT NULL DEFAULT 0,
  event_count INTEGER NOT NULL DEFAULT 0,
  first_ns INTEGER NOT NULL DEFAULT 0,
  last_ns INTEGER NOT NULL DEFAULT 0
);
INSERT INTO runs_v3 SELECT * FROM runs;
DROP TABLE runs;
ALTER TABLE runs_v3 RENAME TO runs;
)sql",
    // v3 -> v4: runs.source may be 'imported' (another tool's traces,
    // docs/import.md). Same columns in the same order.
    R"sql(
CREATE TABLE runs_v4 (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  created_unix_ns INTEGER NOT NULL,
  ended_unix_ns INTEGER NOT NULL DEFAULT 0,
  layout_json TEXT NOT NULL,
  model_json TEXT NOT NULL,
  backend TEXT NOT NULL,
  world_size INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'failed', 'stopped')),
  error TEXT NOT NULL DEFAULT '',
  source TEXT NOT NULL CHECK (source IN ('measured', 'simulated', 'imported')),
  writer_host TEXT NOT NULL,
  writer_pid INTEGER NOT NULL,
  writer_start_ticks INTEGER NOT NULL,
  heartbeat_unix_ns INTEGER NOT NULL,
  max_event_ns INTEGER NOT NULL DEFAULT 0,
  event_count INTEGER NOT NULL DEFAULT 0,
  first_ns INTEGER NOT NULL DEFAULT 0,
  last_ns INTEGER NOT NULL DEFAULT 0
);
INSERT INTO runs_v4 SELECT * FROM runs;
DROP TABLE runs;
ALTER TABLE runs_v4 RENAME TO runs;
)sql",
    // v4 -> v5: events.cpu_ns (thread CPU time of a compute span) and the
    // calibration tables (a cost model of the machine, docs/prediction.md).
    R"sql(
ALTER TABLE events ADD COLUMN cpu_ns INTEGER NOT NULL DEFAULT -1;
CREATE TABLE calibrations (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  source_run INTEGER NOT NULL,
  method TEXT NOT NULL CHECK (method IN ('run', 'benchmark')),
  created_unix_ns INTEGER NOT NULL,
  host TEXT NOT NULL,
  cores INTEGER NOT NULL,
  ranks_per_host INTEGER NOT NULL,
  model_json TEXT NOT NULL,
  backend TEXT NOT NULL
);
CREATE TABLE calibration_ops (
  calibration INTEGER NOT NULL REFERENCES calibrations(id),
  part TEXT NOT NULL,
  op TEXT NOT NULL,
  micro_batch_size INTEGER NOT NULL,
  tp INTEGER NOT NULL,
  wall_ns REAL NOT NULL,
  cpu_ns REAL NOT NULL,
  samples INTEGER NOT NULL,
  PRIMARY KEY (calibration, part, op, micro_batch_size, tp)
) WITHOUT ROWID;
CREATE TABLE calibration_links (
  calibration INTEGER NOT NULL REFERENCES calibrations(id),
  dim TEXT NOT NULL,
  link TEXT NOT NULL,
  collective TEXT NOT NULL,
  group_size INTEGER NOT NULL,
  alpha_ns REAL NOT NULL,
  beta_ns_per_byte REAL NOT NULL,
  samples INTEGER NOT NULL,
  min_bytes INTEGER NOT NULL,
  max_bytes INTEGER NOT NULL,
  PRIMARY KEY (calibration, dim, link, collective, group_size)
) WITHOUT ROWID;
)sql",
    // v5 -> v6: events in blocks (event_block.h), one row per up to 256
    // events of a rank; then moveEventRowsIntoBlocks moves the v5 rows over
    // and drops the events table.
    R"sql(
CREATE TABLE event_blocks (
  id INTEGER PRIMARY KEY,
  run INTEGER NOT NULL,
  rank INTEGER NOT NULL,
  first_start_ns INTEGER NOT NULL,
  max_end_ns INTEGER NOT NULL,
  count INTEGER NOT NULL,
  min_correlation INTEGER NOT NULL,
  max_correlation INTEGER NOT NULL,
  data BLOB NOT NULL
);
CREATE INDEX event_blocks_by_rank_time ON event_blocks (run, rank, first_start_ns);
CREATE INDEX event_blocks_by_correlation ON event_blocks (run, rank, max_correlation)
  WHERE max_correlation != 0;
ALTER TABLE runs ADD COLUMN max_block_ns INTEGER NOT NULL DEFAULT 0;
)sql",
    // v6 -> v7: the error bound of a rank's GPU clock conversion (-1: no
    // GPU times converted, or unknown).
    R"sql(
ALTER TABLE ranks ADD COLUMN gpu_clock_uncertainty_ns INTEGER NOT NULL DEFAULT -1;
)sql",
};
static_assert(std::size(kMigrations) == kSchemaVersion - 1, "one migration per version step");

// v1 files written before the writer kept event_steps lack the table; a
// writer needs it, so the migration creates it and fills it from the events
// (one scan), and readers then find complete step windows there.
constexpr const char* kAddEventSteps = R"sql(
CREATE TABLE event_steps (
  run INTEGER NOT NULL,
  rank INTEGER NOT NULL,
  step INTEGER NOT NULL,
  first_ns INTEGER NOT NULL,
  last_ns INTEGER NOT NULL,
  PRIMARY KEY (run, rank, step)
) WITHOUT ROWID;
INSERT INTO event_steps(run, rank, step, first_ns, last_ns)
  SELECT run, rank, step, MIN(start_ns), MAX(end_ns) FROM events WHERE step >= 0
  GROUP BY run, rank, step;
)sql";

Result<bool> hasTable(SqliteDb& db, const char* name) {
  BS_ASSIGN_OR_RETURN(auto q, db.prepare("SELECT count(*) FROM sqlite_master WHERE type = "
                                         "'table' AND name = ?"));
  q.bind(1, std::string_view(name));
  auto row = q.step();
  if (!row.isOk()) return row.status();
  return q.columnInt(0) > 0;
}

Result<int32_t> storedVersion(SqliteDb& db) {
  BS_ASSIGN_OR_RETURN(auto q, db.prepare("SELECT value FROM meta WHERE key = 'schema_version'"));
  auto row = q.step();
  if (!row.isOk()) return row.status();
  if (!*row) return Status::corrupt(db.path() + " is corrupt: meta has no schema_version");
  try {
    return static_cast<int32_t>(std::stoi(q.columnText(0)));
  } catch (...) {
    return Status::corrupt(db.path() + " is corrupt: schema_version '" + q.columnText(0) +
                           "' is not a number");
  }
}

// Applies the migrations from `from` up; inside the caller's transaction.
Status applyMigrations(SqliteDb& db, int32_t from) {
  if (from == 1) {
    BS_ASSIGN_OR_RETURN(const bool stepsKept, hasTable(db, "event_steps"));
    if (!stepsKept) BS_RETURN_IF_ERROR(db.exec(kAddEventSteps));
  }
  for (int32_t v = from; v < kSchemaVersion; ++v) {
    Status step = db.exec(kMigrations[v - 1]);
    if (step.isOk() && v == 5) step = moveEventRowsIntoBlocks(db);
    BS_RETURN_IF_ERROR(
        step.withContext("cannot migrate the trace schema from v" + std::to_string(v)));
  }
  const std::string set = "UPDATE meta SET value = '" + std::to_string(kSchemaVersion) +
                          "' WHERE key = 'schema_version'";
  return db.exec(set.c_str());
}

uint32_t readBigEndian32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

// The v1 tables, `meta`, then every migration; inside the caller's
// transaction.
Status createSchemaInTransaction(SqliteDb& db) {
  Status s = db.exec(kSchemaV1);
  if (s.isOk()) {
    const std::string meta = std::string("INSERT INTO meta(key, value) VALUES ") +
                             "('application', '" + kApplicationName + "'), " +
                             "('schema_version', '1')";
    s = db.exec(meta.c_str());
  }
  if (s.isOk()) s = applyMigrations(db, 1);
  return s.withContext("cannot create the trace schema");
}

// True when the database holds nothing anyone committed: no table, index or
// view, and no application id or user version (another program's marks).
Result<bool> holdsNothing(SqliteDb& db) {
  for (const char* sql :
       {"SELECT count(*) FROM sqlite_master", "PRAGMA application_id", "PRAGMA user_version"}) {
    BS_ASSIGN_OR_RETURN(auto q, db.prepare(sql));
    BS_ASSIGN_OR_RETURN(const bool row, q.step());
    if (row && q.columnInt(0) != 0) return false;
  }
  return true;
}

}  // namespace

Result<int32_t> createOrCheckSchema(SqliteDb& db) {
  // The write lock first: a concurrent creator either committed the whole
  // schema (checked below) or waits for this one.
  BS_RETURN_IF_ERROR(db.exec("BEGIN IMMEDIATE"));
  auto empty = holdsNothing(db);
  Status s = empty.status();
  int32_t version = kSchemaVersion;
  if (s.isOk() && *empty) {
    s = createSchemaInTransaction(db);
  } else if (s.isOk()) {
    s = checkTraceDatabase(db, &version);
  }
  if (!s.isOk()) {
    (void)db.exec("ROLLBACK");
    return s;
  }
  BS_RETURN_IF_ERROR(db.exec("COMMIT"));
  return version;
}

Status migrateSchema(SqliteDb& db) {
  // Under the write lock, the version is read again: two writers opening
  // one old file (the launcher and rank 0) migrate it once.
  BS_RETURN_IF_ERROR(db.exec("BEGIN IMMEDIATE"));
  auto version = storedVersion(db);
  Status s = version.status();
  const bool movesRows = s.isOk() && *version < kBlockSchemaVersion;
  if (s.isOk() && *version < kSchemaVersion) s = applyMigrations(db, *version);
  if (!s.isOk()) {
    (void)db.exec("ROLLBACK");
    return s;
  }
  BS_RETURN_IF_ERROR(db.exec("COMMIT"));
  if (!movesRows) return Status::ok();
  // The dropped `events` table left its pages free in the file (about 6/7 of
  // it): VACUUM rewrites the file without them. Outside the transaction, as
  // SQLite requires; the migration is committed whether or not it succeeds.
  return db.exec("VACUUM").withContext("migrated " + db.path() + " to trace schema v" +
                                       std::to_string(kSchemaVersion) +
                                       " but could not give back the space of its old events");
}

Status checkTracePath(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return Status::notFound("trace file " + path + " does not exist");
  }
  if (!S_ISREG(st.st_mode)) return Status::invalidArgument(path + " is not a regular file");
  return Status::ok();
}

Status checkFileHeader(SqliteDb& db) {
  const std::string& path = db.path();
  BS_ASSIGN_OR_RETURN(const std::string bytes, db.readFileBytes(0, 100));
  const auto* header = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t got = bytes.size();
  if (got < 16 || std::memcmp(header, "SQLite format 3", 16) != 0) {
    return Status::unsupported(path + " is not a Bubblescope trace: it is not a SQLite database");
  }
  if (got < 100) {
    return Status::corrupt(path + " is truncated: " + std::to_string(got) +
                           " bytes, shorter than a SQLite header");
  }
  uint32_t pageSize = (uint32_t{header[16]} << 8) | header[17];
  if (pageSize == 1) pageSize = 65536;
  if (pageSize < 512 || (pageSize & (pageSize - 1)) != 0) {
    return Status::corrupt(path + " is corrupt: invalid page size " + std::to_string(pageSize));
  }
  struct stat wal {};
  if (::stat((path + "-wal").c_str(), &wal) == 0) return Status::ok();
  BS_ASSIGN_OR_RETURN(const int64_t size, db.fileSizeBytes());
  const auto fileBytes = static_cast<uint64_t>(size);
  const uint32_t pages = readBigEndian32(header + 28);
  // The in-header size is valid only when its version field matches the
  // change counter (SQLite file format, section 1.3.7).
  const bool sizeValid = readBigEndian32(header + 24) == readBigEndian32(header + 92);
  if (fileBytes % pageSize != 0 || (sizeValid && fileBytes < uint64_t{pages} * pageSize)) {
    return Status::corrupt(path + " is truncated: its header describes " +
                           std::to_string(uint64_t{pages} * pageSize) + " bytes but it has " +
                           std::to_string(fileBytes));
  }
  return Status::ok();
}

Status checkTraceDatabase(SqliteDb& db, int32_t* schemaVersion) {
  const std::string& path = db.path();
  auto table = db.prepare("SELECT count(*) FROM sqlite_master WHERE type='table' AND name='meta'");
  if (!table.isOk()) return table.status();
  auto hasRow = table->step();
  if (!hasRow.isOk()) return hasRow.status();
  if (table->columnInt(0) == 0) {
    auto empty = holdsNothing(db);
    if (empty.isOk() && *empty) {
      // Creation is one transaction: a database with nothing committed is a
      // trace a writer is creating, or was killed while creating.
      return Status::failedPrecondition(
          path +
          " holds no trace yet: its writer has not created it (it is being created, or "
          "its writer stopped before it could); run or simulate --trace " +
          path + " creates it");
    }
    return Status::unsupported(path +
                               " is not a Bubblescope trace: a SQLite database from another "
                               "program (it has no Bubblescope meta table)");
  }
  auto query = db.prepare(
      "SELECT key, value FROM meta WHERE key IN ('application', "
      "'schema_version')");
  if (!query.isOk()) return query.status();
  std::string application;
  std::string version;
  while (true) {
    auto row = query->step();
    if (!row.isOk()) return row.status();
    if (!*row) break;
    (query->columnText(0) == "application" ? application : version) = query->columnText(1);
  }
  if (application != kApplicationName) {
    return Status::unsupported(path +
                               " is not a Bubblescope trace: a SQLite database from another "
                               "program (meta.application is '" +
                               application + "')");
  }
  int32_t v = 0;
  try {
    v = std::stoi(version);
  } catch (...) {
    return Status::corrupt(path + " is corrupt: schema_version '" + version + "' is not a number");
  }
  if (v > kSchemaVersion) {
    return Status::unsupported(path + " was written with trace schema v" + std::to_string(v) +
                               "; this build of Bubblescope reads up to v" +
                               std::to_string(kSchemaVersion) + ": upgrade Bubblescope");
  }
  if (v < 1) {
    return Status::corrupt(path + " is corrupt: schema_version " + std::to_string(v));
  }
  *schemaVersion = v;
  return Status::ok();
}

}  // namespace bubblescope::storage
