// How a process may touch a trace file: opening one for reading, also where
// this user cannot write (docs/trace-format.md, "Concurrency").
//
// Rules:
// - While a process may hold a connection to a trace, it never opens, closes,
//   renames or unlinks the file, its -wal or its -shm outside SQLite: closing
//   any descriptor of a file drops every POSIX lock the process holds on it,
//   and a writer in another process then takes itself for the last user and
//   resets the WAL under this process's readers. stat() opens no descriptor
//   and is allowed; the header is read through SQLite's descriptor.
// - A reader uses an ordinary read-only connection whenever SQLite can open
//   or create the -shm (also a -shm it may only read). When it cannot (the
//   folder is not writable by this user and no -shm exists), the file is read
//   immutable only if neither a -wal nor a -shm exists: every WAL connection
//   keeps both while open, so then no process is writing and the file holds
//   every committed run. A writer that starts later must create them; the
//   reader looks for them (stat) before each query and then reads through
//   them (TraceReader). A -wal without a -shm this user may use is refused:
//   reading around it would miss committed runs.
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
  bool immutable = false;  // read without locks, -wal or -shm (see above)
};

// Opens a checked Bubblescope trace for reading under the rules above.
// Errors name the file: missing, not a trace, truncated, or unreadable here.
Result<ReadingConnection> openForReading(const std::string& path);

// Whether `path`-wal or `path`-shm exists now (stat only).
bool walFilesExist(const std::string& path);

}  // namespace bubblescope::storage
