// Thin RAII layer over the SQLite C API. Storage's own; storage/import reads
// Nsight Systems exports (SQLite files of another tool) through it.
//
// Contract: every failure comes back as a Status whose message names the
// file and what SQLite said, mapped to a code a caller can act on
// (kCorrupt for a damaged or foreign file, kIoError for the OS refusing).
// Not thread-safe: one SqliteDb per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "common/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace bubblescope::storage {

class SqliteStatement;

class SqliteDb {
 public:
  // kReadOnly never creates the file. kReadOnlyImmutable reads the file
  // without locks, -wal or -shm (SQLite's immutable=1): only for a file no
  // writer can touch while it is open (trace_file_access.h says when).
  enum class Mode { kReadOnly, kReadOnlyImmutable, kReadWriteCreate };

  // Opens `path`. SQLite opens the file here and reads it on the first query.
  static Result<std::unique_ptr<SqliteDb>> open(const std::string& path, Mode mode);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  // How long a statement waits for another connection's lock before it
  // fails busy (5000 ms from open()).
  void setBusyTimeout(int ms);
  // Runs one or more statements that return no rows.
  Status exec(const char* sql);
  Result<SqliteStatement> prepare(std::string_view sql);
  int64_t lastInsertRowId() const;
  int64_t changes() const;  // rows changed by the last statement
  // Whether the last failed call failed on a lock another connection held
  // (SQLITE_BUSY): the cases SQLite's busy handler does not wait out, such
  // as two connections upgrading their shared locks at once.
  bool lastFailureWasBusy() const;
  const std::string& path() const { return path_; }
  sqlite3* handle() { return db_; }
  // SQLite's extended result code of the last failure on this connection.
  int lastErrorCode() const;
  // Whether the last failure was a lock another connection holds (SQLITE_BUSY).
  bool lastErrorWasBusy() const;

  // Up to `count` bytes of the database file from `offset` (fewer when the
  // file is shorter), read through SQLite's own file descriptor. A process
  // must never open and close a database file it holds connections to: that
  // drops every POSIX lock the process holds on it, and another process may
  // then reset the WAL under this one's readers.
  Result<std::string> readFileBytes(int64_t offset, size_t count);
  // The size of the database file, through SQLite's descriptor.
  Result<int64_t> fileSizeBytes();

  // A Status for the last error on this connection, prefixed by `what`.
  Status errorStatus(int rc, std::string_view what) const;

 private:
  SqliteDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_;
  std::string path_;
};

// A prepared statement; reusable after reset(). Move-only.
class SqliteStatement {
 public:
  SqliteStatement(SqliteDb* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~SqliteStatement();
  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement& operator=(SqliteStatement&& other) noexcept;
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  // Binding is 1-based, as in SQLite.
  void bind(int index, int64_t value);
  void bind(int index, double value);
  void bind(int index, std::string_view value);
  void bindBlob(int index, std::span<const uint8_t> value);
  void bindNull(int index);

  // Advances: true when a row is available, false when done, error otherwise.
  // A read-only statement outside a transaction that finds the file busy
  // before its first row (a writer resetting or recovering the WAL) is
  // retried with bounded backoff, on top of the connection's busy timeout.
  Result<bool> step();
  // step() for statements that return no rows, then reset().
  Status run();
  void reset();

  int64_t columnInt(int index) const;
  double columnDouble(int index) const;
  std::string columnText(int index) const;
  bool columnIsNull(int index) const;
  // The bytes of a BLOB column, valid until the next step() or reset().
  std::span<const uint8_t> columnBlob(int index) const;

 private:
  SqliteDb* db_;
  sqlite3_stmt* stmt_;
  bool rowsReturned_ = false;  // since the last reset: no retry mid-result
};

// Maps a SQLite result code to a Status code (corrupt, not a database, I/O).
StatusCode statusCodeForSqlite(int rc);

}  // namespace bubblescope::storage
