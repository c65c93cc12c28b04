// How a process may touch a trace file, and opening one for reading
// (docs/trace-format.md, "Concurrency").
//
// Rule: while a process may hold a connection to a trace, it never opens,
// closes, renames or unlinks the file, its -wal or its -shm outside SQLite:
// closing any descriptor of a file drops every POSIX lock the process holds
// on it, and a writer in another process then takes itself for the last user
// and resets the WAL under this process's readers. stat() opens no
// descriptor and is allowed; the header is read through SQLite's descriptor.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/result.h"

namespace bubblescope::storage {

class SqliteDb;

struct ReadingConnection {
  std::unique_ptr<SqliteDb> db;
  int32_t schemaVersion = 0;
};

// Opens a checked Bubblescope trace for reading under the rule above.
// Errors name the file: missing, not a trace, truncated, newer schema.
Result<ReadingConnection> openForReading(const std::string& path);

}  // namespace bubblescope::storage
