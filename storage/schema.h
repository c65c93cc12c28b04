// Schema v1 of the trace file (docs/trace-format.md describes every column).
//
// Contract: kSchemaVersion only grows. A reader accepts files with a version
// in [1, kSchemaVersion]; a newer file is refused with a message saying so.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace bubblescope::storage {

class SqliteDb;

inline constexpr int32_t kSchemaVersion = 1;
inline constexpr const char* kApplicationName = "bubblescope";

// Creates every table and index of the current schema and fills `meta`.
// Precondition: `db` is empty and inside no transaction.
Status createSchema(SqliteDb& db);

// Checks the raw bytes of an existing file before SQLite touches it: the
// SQLite magic, a size that is whole pages and not shorter than the header
// says. Errors name the file: not found, not SQLite, truncated.
Status checkFileHeader(const std::string& path);

// Checks that an opened database is a Bubblescope trace and returns its
// schema version: another program's database, a newer schema, or a damaged
// meta table each give their own message.
Status checkTraceDatabase(SqliteDb& db, int32_t* schemaVersion);

}  // namespace bubblescope::storage
