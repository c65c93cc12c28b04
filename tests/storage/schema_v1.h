// A trace file of schema v1, built here with raw SQL exactly as the v1
// writer laid it out (no events.correlation), so tests prove that old files
// still open and migrate. Frozen: never update this to a newer schema.
#pragma once

#include <sqlite3.h>

#include <algorithm>
#include <string>
#include <vector>

#include "trace_model/event.h"

namespace bubblescope::testing {

// The v1 schema. Files from before the writer kept step windows lack
// event_steps; `withEventSteps` builds either kind.
inline std::string schemaV1(bool withEventSteps) {
  std::string sql = R"sql(
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE strings (id INTEGER PRIMARY KEY, value TEXT NOT NULL UNIQUE);
CREATE TABLE runs (
  id INTEGER PRIMARY KEY, name TEXT NOT NULL, created_unix_ns INTEGER NOT NULL,
  ended_unix_ns INTEGER NOT NULL DEFAULT 0, layout_json TEXT NOT NULL, model_json TEXT NOT NULL,
  backend TEXT NOT NULL, world_size INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'failed')),
  error TEXT NOT NULL DEFAULT '', source TEXT NOT NULL CHECK (source IN ('measured', 'simulated')),
  writer_host TEXT NOT NULL, writer_pid INTEGER NOT NULL, writer_start_ticks INTEGER NOT NULL,
  heartbeat_unix_ns INTEGER NOT NULL, max_event_ns INTEGER NOT NULL DEFAULT 0,
  event_count INTEGER NOT NULL DEFAULT 0, first_ns INTEGER NOT NULL DEFAULT 0,
  last_ns INTEGER NOT NULL DEFAULT 0);
CREATE TABLE ranks (
  run INTEGER NOT NULL REFERENCES runs(id), rank INTEGER NOT NULL, host TEXT NOT NULL DEFAULT '',
  pid INTEGER NOT NULL DEFAULT 0, device TEXT NOT NULL DEFAULT 'cpu', dp INTEGER NOT NULL DEFAULT 0,
  tp INTEGER NOT NULL DEFAULT 0, pp INTEGER NOT NULL DEFAULT 0,
  clock_offset_ns INTEGER NOT NULL DEFAULT 0, clock_uncertainty_ns INTEGER NOT NULL DEFAULT 0,
  cores_on_host INTEGER NOT NULL DEFAULT 0, ranks_on_host INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (run, rank)) WITHOUT ROWID;
CREATE TABLE events (
  id INTEGER PRIMARY KEY, run INTEGER NOT NULL, rank INTEGER NOT NULL, lane INTEGER NOT NULL,
  kind INTEGER NOT NULL, name INTEGER NOT NULL, start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL,
  step INTEGER NOT NULL, micro_batch INTEGER NOT NULL, stage INTEGER NOT NULL,
  chunk INTEGER NOT NULL, dim INTEGER NOT NULL, bytes INTEGER NOT NULL, flops INTEGER NOT NULL,
  peer INTEGER NOT NULL);
CREATE INDEX events_by_rank_time ON events (run, rank, start_ns);
CREATE TABLE steps (
  run INTEGER NOT NULL, step INTEGER NOT NULL, rank INTEGER NOT NULL, loss REAL,
  tokens INTEGER NOT NULL, start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL,
  PRIMARY KEY (run, step, rank)) WITHOUT ROWID;
CREATE TABLE samples (
  run INTEGER NOT NULL, rank INTEGER NOT NULL, name INTEGER NOT NULL, t_ns INTEGER NOT NULL,
  value REAL NOT NULL);
CREATE INDEX samples_by_series ON samples (run, rank, name, t_ns);
INSERT INTO meta(key, value) VALUES ('application', 'bubblescope'), ('schema_version', '1');
)sql";
  if (withEventSteps) {
    sql += R"sql(
CREATE TABLE event_steps (
  run INTEGER NOT NULL, rank INTEGER NOT NULL, step INTEGER NOT NULL, first_ns INTEGER NOT NULL,
  last_ns INTEGER NOT NULL, PRIMARY KEY (run, rank, step)) WITHOUT ROWID;
)sql";
  }
  return sql;
}

// Writes a finished run 1 of two ranks holding `events` (names interned,
// every field stored as v1 stored it) into a new v1 file at `path`. Returns
// an empty string or SQLite's error.
inline std::string writeV1Trace(const std::string& path,
                                const std::vector<trace_model::Event>& events,
                                bool withEventSteps) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    sqlite3_close(db);
    return "cannot open " + path;
  }
  std::string sql = "PRAGMA journal_mode=WAL; BEGIN;" + schemaV1(withEventSteps) +
                    "INSERT INTO runs(id, name, created_unix_ns, ended_unix_ns, layout_json, "
                    "model_json, backend, world_size, status, source, writer_host, writer_pid, "
                    "writer_start_ticks, heartbeat_unix_ns, max_event_ns, event_count, first_ns, "
                    "last_ns) VALUES (1, 'old', 1, 2, '{}', '{}', 'cpu', 2, 'finished', "
                    "'measured', 'h', 1, 1, 2, 0, 0, 0, 0);"
                    "INSERT INTO ranks(run, rank) VALUES (1, 0), (1, 1);";
  int64_t maxNs = 0, firstNs = 0, lastNs = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    const trace_model::Event& e = events[i];
    sql += "INSERT OR IGNORE INTO strings(value) VALUES ('" + e.name + "');";
    sql +=
        "INSERT INTO events(run, rank, lane, kind, name, start_ns, end_ns, step, micro_batch, "
        "stage, chunk, dim, bytes, flops, peer) VALUES (1, " +
        std::to_string(e.rank) + ", " + std::to_string(static_cast<int32_t>(e.lane)) + ", " +
        std::to_string(static_cast<int32_t>(e.kind)) + ", (SELECT id FROM strings WHERE value = '" +
        e.name + "'), " + std::to_string(e.startNs) + ", " + std::to_string(e.endNs) + ", " +
        std::to_string(e.step) + ", " + std::to_string(e.microBatch) + ", " +
        std::to_string(e.stage) + ", " + std::to_string(e.chunk) + ", " +
        std::to_string(static_cast<int32_t>(e.dim)) + ", " + std::to_string(e.bytes) + ", " +
        std::to_string(e.flops) + ", " + std::to_string(e.peer) + ");";
    if (withEventSteps && e.step >= 0) {
      sql += "INSERT INTO event_steps VALUES (1, " + std::to_string(e.rank) + ", " +
             std::to_string(e.step) + ", " + std::to_string(e.startNs) + ", " +
             std::to_string(e.endNs) +
             ") ON CONFLICT DO UPDATE SET first_ns = min(first_ns, excluded.first_ns), "
             "last_ns = max(last_ns, excluded.last_ns);";
    }
    maxNs = std::max(maxNs, e.endNs - e.startNs);
    firstNs = i == 0 ? e.startNs : std::min(firstNs, e.startNs);
    lastNs = i == 0 ? e.endNs : std::max(lastNs, e.endNs);
  }
  sql += "UPDATE runs SET max_event_ns = " + std::to_string(maxNs) +
         ", event_count = " + std::to_string(events.size()) +
         ", first_ns = " + std::to_string(firstNs) + ", last_ns = " + std::to_string(lastNs) +
         " WHERE id = 1; COMMIT;";
  char* error = nullptr;
  std::string result;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    result = error ? error : "unknown SQLite error";
  }
  sqlite3_free(error);
  sqlite3_close(db);
  return result;
}

}  // namespace bubblescope::testing
