// Thin RAII layer over the SQLite C API, private to storage/.
//
// Contract: every failure comes back as a Status whose message names the
// file and what SQLite said, mapped to a code a caller can act on
// (kCorrupt for a damaged or foreign file, kIoError for the OS refusing).
// Not thread-safe: one SqliteDb per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace bubblescope::storage {

class SqliteStatement;

class SqliteDb {
 public:
  enum class Mode { kReadOnly, kReadWriteCreate };

  // Opens `path`; kReadOnly never creates the file.
  static Result<std::unique_ptr<SqliteDb>> open(const std::string& path, Mode mode);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  // Runs one or more statements that return no rows.
  Status exec(const char* sql);
  Result<SqliteStatement> prepare(std::string_view sql);
  int64_t lastInsertRowId() const;
  int64_t changes() const;  // rows changed by the last statement
  const std::string& path() const { return path_; }
  sqlite3* handle() { return db_; }

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
  void bindNull(int index);

  // Advances: true when a row is available, false when done, error otherwise.
  Result<bool> step();
  // step() for statements that return no rows, then reset().
  Status run();
  void reset();

  int64_t columnInt(int index) const;
  double columnDouble(int index) const;
  std::string columnText(int index) const;
  bool columnIsNull(int index) const;

 private:
  SqliteDb* db_;
  sqlite3_stmt* stmt_;
};

// Maps a SQLite result code to a Status code (corrupt, not a database, I/O).
StatusCode statusCodeForSqlite(int rc);

}  // namespace bubblescope::storage
