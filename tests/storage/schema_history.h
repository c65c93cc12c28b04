// Trace files of every schema before v6, built here as their writers laid
// them out: the v1 file of schema_v1.h, then the migrations v1 -> v2 … v4 ->
// v5 exactly as they were (new files were always created as v1 plus every
// migration). Frozen: never update these to a newer schema.
#pragma once

#include <sqlite3.h>

#include <string>
#include <vector>

#include "tests/storage/schema_v1.h"
#include "trace_model/event.h"

namespace bubblescope::testing {

inline std::string runsTableWithChecks(const std::string& name, const std::string& sources) {
  return "CREATE TABLE " + name +
         " (id INTEGER PRIMARY KEY, name TEXT NOT NULL, created_unix_ns INTEGER NOT NULL, "
         "ended_unix_ns INTEGER NOT NULL DEFAULT 0, layout_json TEXT NOT NULL, model_json TEXT "
         "NOT NULL, backend TEXT NOT NULL, world_size INTEGER NOT NULL, status TEXT NOT NULL "
         "CHECK (status IN ('running', 'finished', 'failed', 'stopped')), error TEXT NOT NULL "
         "DEFAULT '', source TEXT NOT NULL CHECK (source IN (" +
         sources +
         ")), writer_host TEXT NOT NULL, writer_pid INTEGER NOT NULL, writer_start_ticks INTEGER "
         "NOT NULL, heartbeat_unix_ns INTEGER NOT NULL, max_event_ns INTEGER NOT NULL DEFAULT 0, "
         "event_count INTEGER NOT NULL DEFAULT 0, first_ns INTEGER NOT NULL DEFAULT 0, last_ns "
         "INTEGER NOT NULL DEFAULT 0);"
         "INSERT INTO " +
         name + " SELECT * FROM runs; DROP TABLE runs; ALTER TABLE " + name + " RENAME TO runs;";
}

// The SQL that took a file from version v to v + 1, for v in 1..4.
inline std::string migrationFrom(int v) {
  switch (v) {
    case 1:
      return "ALTER TABLE events ADD COLUMN correlation INTEGER NOT NULL DEFAULT 0;"
             "CREATE INDEX events_by_correlation ON events (run, rank, correlation) "
             "WHERE correlation != 0;"
             "ALTER TABLE ranks ADD COLUMN parameters INTEGER NOT NULL DEFAULT 0;";
    case 2:
      return runsTableWithChecks("runs_v3", "'measured', 'simulated'");
    case 3:
      return runsTableWithChecks("runs_v4", "'measured', 'simulated', 'imported'");
    case 4:
      return "ALTER TABLE events ADD COLUMN cpu_ns INTEGER NOT NULL DEFAULT -1;"
             "CREATE TABLE calibrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL, source_run "
             "INTEGER NOT NULL, method TEXT NOT NULL CHECK (method IN ('run', 'benchmark')), "
             "created_unix_ns INTEGER NOT NULL, host TEXT NOT NULL, cores INTEGER NOT NULL, "
             "ranks_per_host INTEGER NOT NULL, model_json TEXT NOT NULL, backend TEXT NOT NULL);"
             "CREATE TABLE calibration_ops (calibration INTEGER NOT NULL REFERENCES "
             "calibrations(id), part TEXT NOT NULL, op TEXT NOT NULL, micro_batch_size INTEGER "
             "NOT NULL, tp INTEGER NOT NULL, wall_ns REAL NOT NULL, cpu_ns REAL NOT NULL, samples "
             "INTEGER NOT NULL, PRIMARY KEY (calibration, part, op, micro_batch_size, tp)) "
             "WITHOUT ROWID;"
             "CREATE TABLE calibration_links (calibration INTEGER NOT NULL REFERENCES "
             "calibrations(id), dim TEXT NOT NULL, link TEXT NOT NULL, collective TEXT NOT NULL, "
             "group_size INTEGER NOT NULL, alpha_ns REAL NOT NULL, beta_ns_per_byte REAL NOT "
             "NULL, samples INTEGER NOT NULL, min_bytes INTEGER NOT NULL, max_bytes INTEGER NOT "
             "NULL, PRIMARY KEY (calibration, dim, link, collective, group_size)) WITHOUT ROWID;";
    default:
      return "";
  }
}

inline std::string execOn(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string result;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    result = "cannot open " + path;
  } else {
    char* error = nullptr;
    if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
      result = error ? error : "unknown SQLite error";
    }
    sqlite3_free(error);
  }
  sqlite3_close(db);
  return result;
}

// A file of schema `version` (1..5) holding run 1 of ranks 0 and 1 with
// `events` (in that order, as rows 1, 2, …): their correlation ids from v2
// on, their CPU times from v5 on. Returns an empty string or SQLite's error.
inline std::string writeTraceAtVersion(const std::string& path,
                                       const std::vector<trace_model::Event>& events, int version) {
  if (std::string error = writeV1Trace(path, events, /*withEventSteps=*/true); !error.empty()) {
    return error;
  }
  std::string sql = "BEGIN;";
  for (int v = 1; v < version; ++v) sql += migrationFrom(v);
  for (size_t i = 0; i < events.size(); ++i) {
    const std::string row = " WHERE id = " + std::to_string(i + 1) + ";";
    if (version >= 2) {
      sql += "UPDATE events SET correlation = " + std::to_string(events[i].correlationId) + row;
    }
    if (version >= 5) {
      sql += "UPDATE events SET cpu_ns = " + std::to_string(events[i].cpuNs) + row;
    }
  }
  sql += "UPDATE meta SET value = '" + std::to_string(version) +
         "' WHERE key = 'schema_version'; COMMIT;";
  return execOn(path, sql);
}

}  // namespace bubblescope::testing
