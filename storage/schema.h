// Schema of the trace file (docs/trace-format.md describes every column).
//
// v1: the first schema. v2: events.correlation (links a GPU record to the
// host call that launched it) and its index events_by_correlation. v3:
// runs.status may be 'stopped'. v4: runs.source may be 'imported'. v5: events.cpu_ns (thread CPU
// time of a compute span, -1 unknown) and the calibration tables (calibrations, calibration_ops,
// calibration_links: a cost model, docs/prediction.md). v6: events stored in
// blocks (event_blocks, event_block.h) instead of a row each, and
// runs.max_block_ns; the migration moves the rows and drops `events`.
// v7: ranks.gpu_clock_uncertainty_ns (the bound of a rank's CUPTI -> host
// clock conversion; -1 unknown).
//
// Contract: kSchemaVersion only grows. A reader accepts files with a version
// in [1, kSchemaVersion] (a v1 file reads as if every correlation were 0); a
// newer file is refused with a message saying so. A writer that opens an
// older file migrates it to kSchemaVersion first (migrateSchema).
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"
#include "common/status.h"

namespace bubblescope::storage {

class SqliteDb;

inline constexpr int32_t kSchemaVersion = 7;
// The first schema that stores events in blocks (event_blocks).
inline constexpr int32_t kBlockSchemaVersion = 6;
inline constexpr const char* kApplicationName = "bubblescope";

// Under the write lock (BEGIN IMMEDIATE): creates the schema (the v1 tables
// and `meta`, then every migration, so a new file and a migrated one are
// alike) when the
// database holds nothing committed (a new file, or one whose creator died
// before committing: creation is one transaction, so nothing is lost), else
// checks it is a trace (checkTraceDatabase). Returns the schema version
// (kSchemaVersion for a created one). Safe against a concurrent creator:
// the second waits for the first's commit and then finds its trace.
// Precondition: inside no transaction.
Result<int32_t> createOrCheckSchema(SqliteDb& db);

// Brings a checked trace file (checkTraceDatabase) up to kSchemaVersion in
// one transaction; a no-op when it is already there, also when another
// process migrated it meanwhile. Precondition: inside no transaction.
Status migrateSchema(SqliteDb& db);

// Checks that `path` names an existing regular file (stat only: no
// descriptor is opened). Errors name the file: not found, not a file.
Status checkTracePath(const std::string& path);

// Checks the raw bytes of an opened file before SQLite reads it, through
// SQLite's own descriptor (SqliteDb::readFileBytes): the SQLite magic, a
// valid page size, a size that is whole pages and not shorter than the
// header says. The size is judged only while no -wal exists: with one, a
// checkpoint may be growing the file, and SQLite checks the size itself
// against its snapshot. Errors name the file: not SQLite, truncated.
Status checkFileHeader(SqliteDb& db);

// Checks that an opened database is a Bubblescope trace and returns its
// schema version: another program's database, a newer schema, or a damaged
// meta table each give their own message; a database with nothing committed
// is "holds no trace yet" (FailedPrecondition), a trace being created.
Status checkTraceDatabase(SqliteDb& db, int32_t* schemaVersion);

}  // namespace bubblescope::storage
