#include "storage/sqlite_db.h"

#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <thread>
#include <utility>

namespace bubblescope::storage {
namespace {

// Retries of a read that finds the file busy: 1, 2, 4 … 256 ms (about 0.5 s),
// on top of sqlite3_busy_timeout's wait for locks.
constexpr int kBusyRetries = 9;

bool isBusy(int rc) {
  return (rc & 0xff) == SQLITE_BUSY || rc == SQLITE_PROTOCOL;
}

// Calls `attempt` until it is not busy, at most kBusyRetries more times.
template <class Attempt>
int retryWhileBusy(bool retryable, Attempt attempt) {
  int rc = attempt();
  for (int i = 0; retryable && isBusy(rc) && i < kBusyRetries; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1 << i));
    rc = attempt();
  }
  return rc;
}

// A file: URI for `path` (RFC 3986 percent-encoding), so that '?', '#' and
// '%' in a file name stay part of the name.
std::string fileUri(const std::string& path, const char* query) {
  static const char* kHex = "0123456789ABCDEF";
  std::string uri = "file:";
  for (const unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
      uri += static_cast<char>(c);
    } else {
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 15];
    }
  }
  return uri + "?" + query;
}

}  // namespace

StatusCode statusCodeForSqlite(int rc) {
  switch (rc & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_FORMAT:
      return StatusCode::kCorrupt;
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_FULL:
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return StatusCode::kIoError;
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
      return StatusCode::kInvalidArgument;
    default:
      return StatusCode::kInternal;
  }
}

Result<std::unique_ptr<SqliteDb>> SqliteDb::open(const std::string& path, Mode mode) {
  sqlite3* db = nullptr;
  int flags = SQLITE_OPEN_NOMUTEX;
  std::string name = path;
  switch (mode) {
    case Mode::kReadOnly:
      flags |= SQLITE_OPEN_READONLY;
      break;
    case Mode::kReadOnlyImmutable:
      flags |= SQLITE_OPEN_READONLY | SQLITE_OPEN_URI;
      name = fileUri(path, "mode=ro&immutable=1");
      break;
    case Mode::kReadWriteCreate:
      flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
      break;
  }
  const int rc = sqlite3_open_v2(name.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string detail = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    return Status(statusCodeForSqlite(rc), "cannot open " + path + ": " + detail);
  }
  sqlite3_extended_result_codes(db, 1);
  // A reader may meet a writer mid-checkpoint; wait instead of failing.
  sqlite3_busy_timeout(db, 5000);
  return std::unique_ptr<SqliteDb>(new SqliteDb(db, path));
}

void SqliteDb::setBusyTimeout(int ms) {
  sqlite3_busy_timeout(db_, ms);
}

SqliteDb::~SqliteDb() {
  sqlite3_close_v2(db_);
}

Status SqliteDb::exec(const char* sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return Status::ok();
  std::string message = err ? err : sqlite3_errstr(rc);
  sqlite3_free(err);
  return Status(statusCodeForSqlite(rc), path_ + ": " + message);
}

Result<SqliteStatement> SqliteDb::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  // Preparing reads the schema: it may meet a busy file like a query does.
  const int rc = retryWhileBusy(sqlite3_get_autocommit(db_) != 0, [&] {
    return sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  });
  if (rc != SQLITE_OK) return errorStatus(rc, "prepare");
  return SqliteStatement(this, stmt);
}

int SqliteDb::lastErrorCode() const {
  return sqlite3_extended_errcode(db_);
}

bool SqliteDb::lastErrorWasBusy() const {
  return isBusy(sqlite3_extended_errcode(db_));
}

Result<int64_t> SqliteDb::fileSizeBytes() {
  sqlite3_file* file = nullptr;
  int rc = sqlite3_file_control(db_, "main", SQLITE_FCNTL_FILE_POINTER, &file);
  if (rc != SQLITE_OK || file == nullptr || file->pMethods == nullptr) {
    return Status::ioError("cannot read " + path_ + ": SQLite has not opened it");
  }
  sqlite3_int64 size = 0;
  rc = file->pMethods->xFileSize(file, &size);
  if (rc != SQLITE_OK) return Status(statusCodeForSqlite(rc), "cannot read the size of " + path_);
  return static_cast<int64_t>(size);
}

Result<std::string> SqliteDb::readFileBytes(int64_t offset, size_t count) {
  BS_ASSIGN_OR_RETURN(const int64_t size, fileSizeBytes());
  sqlite3_file* file = nullptr;
  sqlite3_file_control(db_, "main", SQLITE_FCNTL_FILE_POINTER, &file);
  const auto available = static_cast<size_t>(std::max<int64_t>(0, size - offset));
  std::string bytes(std::min(count, available), '\0');
  if (bytes.empty()) return bytes;
  const int rc = file->pMethods->xRead(file, bytes.data(), static_cast<int>(bytes.size()), offset);
  if (rc != SQLITE_OK && rc != SQLITE_IOERR_SHORT_READ) {
    return Status(statusCodeForSqlite(rc), "cannot read " + path_ + ": " + sqlite3_errstr(rc));
  }
  return bytes;
}

int64_t SqliteDb::lastInsertRowId() const {
  return sqlite3_last_insert_rowid(db_);
}
int64_t SqliteDb::changes() const {
  return sqlite3_changes64(db_);
}
bool SqliteDb::lastFailureWasBusy() const {
  return (sqlite3_errcode(db_) & 0xff) == SQLITE_BUSY;
}

Status SqliteDb::errorStatus(int rc, std::string_view what) const {
  // One printable line: "malformed database schema" quotes the damaged SQL,
  // whatever bytes it holds (control bytes, invalid or C1 UTF-8 such as
  // U+0085, which some readers break lines on), and a long quote says no
  // more than its start.
  std::string detail = sqlite3_errmsg(db_);
  for (char& c : detail) {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b == 0x7f) c = ' ';
    if (b >= 0x80) c = '?';
  }
  constexpr size_t kMaxDetail = 200;
  if (detail.size() > kMaxDetail) detail = detail.substr(0, kMaxDetail) + "...";
  if (rc == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_CORRUPT) {
    detail += " (the file is damaged)";
  }
  return Status(statusCodeForSqlite(rc), path_ + ": " + std::string(what) + " failed: " + detail);
}

SqliteStatement::~SqliteStatement() {
  sqlite3_finalize(stmt_);
}

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept
    : db_(other.db_),
      stmt_(std::exchange(other.stmt_, nullptr)),
      rowsReturned_(other.rowsReturned_) {}

SqliteStatement& SqliteStatement::operator=(SqliteStatement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = other.db_;
    stmt_ = std::exchange(other.stmt_, nullptr);
    rowsReturned_ = other.rowsReturned_;
  }
  return *this;
}

void SqliteStatement::bind(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
}
void SqliteStatement::bind(int index, double value) {
  sqlite3_bind_double(stmt_, index, value);
}
void SqliteStatement::bind(int index, std::string_view value) {
  sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
}
void SqliteStatement::bindBlob(int index, std::span<const uint8_t> value) {
  sqlite3_bind_blob(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
}
void SqliteStatement::bindNull(int index) {
  sqlite3_bind_null(stmt_, index);
}

Result<bool> SqliteStatement::step() {
  // A read that has returned no row yet starts afresh on a retry; inside a
  // transaction or after rows, a retry could mix two snapshots.
  const bool retryable = !rowsReturned_ && sqlite3_stmt_readonly(stmt_) != 0 &&
                         sqlite3_get_autocommit(db_->handle()) != 0;
  const int rc = retryWhileBusy(retryable, [&] { return sqlite3_step(stmt_); });
  if (rc == SQLITE_ROW) {
    rowsReturned_ = true;
    return true;
  }
  rowsReturned_ = false;
  if (rc == SQLITE_DONE) return false;
  Status s = db_->errorStatus(rc, "query");
  sqlite3_reset(stmt_);
  return s;
}

Status SqliteStatement::run() {
  const int rc = sqlite3_step(stmt_);
  sqlite3_reset(stmt_);
  rowsReturned_ = false;
  if (rc == SQLITE_DONE || rc == SQLITE_ROW) return Status::ok();
  return db_->errorStatus(rc, "write");
}

void SqliteStatement::reset() {
  sqlite3_reset(stmt_);
  rowsReturned_ = false;
}

int64_t SqliteStatement::columnInt(int index) const {
  return sqlite3_column_int64(stmt_, index);
}
double SqliteStatement::columnDouble(int index) const {
  return sqlite3_column_double(stmt_, index);
}
std::string SqliteStatement::columnText(int index) const {
  const auto* text = sqlite3_column_text(stmt_, index);
  return text ? std::string(reinterpret_cast<const char*>(text),
                            static_cast<size_t>(sqlite3_column_bytes(stmt_, index)))
              : std::string();
}
bool SqliteStatement::columnIsNull(int index) const {
  return sqlite3_column_type(stmt_, index) == SQLITE_NULL;
}

std::span<const uint8_t> SqliteStatement::columnBlob(int index) const {
  const auto* data = static_cast<const uint8_t*>(sqlite3_column_blob(stmt_, index));
  const auto size = static_cast<size_t>(sqlite3_column_bytes(stmt_, index));
  return data ? std::span<const uint8_t>(data, size) : std::span<const uint8_t>();
}

}  // namespace bubblescope::storage
