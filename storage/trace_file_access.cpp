#include "storage/trace_file_access.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "storage/schema.h"
#include "storage/sqlite_db.h"

namespace bubblescope::storage {
namespace {

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// The first query failed because SQLite could not open or create the -shm.
bool needsSharedMemory(int rc) {
  return (rc & 0xff) == SQLITE_READONLY || (rc & 0xff) == SQLITE_CANTOPEN;
}

std::string folderOf(const std::string& path) {
  const auto parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

}  // namespace

bool walFilesExist(const std::string& path) {
  return exists(path + "-wal") || exists(path + "-shm");
}

Result<ReadingConnection> openForReading(const std::string& path) {
  BS_RETURN_IF_ERROR(checkTracePath(path));
  ReadingConnection c;
  BS_ASSIGN_OR_RETURN(auto db, SqliteDb::open(path, SqliteDb::Mode::kReadOnly));
  BS_RETURN_IF_ERROR(checkFileHeader(*db));
  const Status plain = checkTraceDatabase(*db, &c.schemaVersion);
  if (plain.isOk()) {
    c.db = std::move(db);
    return c;
  }
  if (!needsSharedMemory(db->lastErrorCode())) return plain;
  db.reset();
  const std::string folder = folderOf(path);
  if (exists(path + "-wal")) {
    return Status::ioError("cannot read " + path + " here: " + path +
                           "-wal may hold runs not yet in the file, and reading them needs " +
                           path + "-shm, which this user cannot create in " + folder +
                           (::access(folder.c_str(), W_OK) != 0 ? " (not writable)" : "") +
                           "; open it once as a user who can write " + folder + ", or copy " +
                           path + " and " + path + "-wal to a folder you can write");
  }
  if (exists(path + "-shm")) {
    return Status::ioError("cannot read " + path + " here: this user cannot use " + path +
                           "-shm, and a writer may be using it");
  }
  BS_ASSIGN_OR_RETURN(c.db, SqliteDb::open(path, SqliteDb::Mode::kReadOnlyImmutable));
  BS_RETURN_IF_ERROR(checkTraceDatabase(*c.db, &c.schemaVersion));
  c.immutable = true;
  return c;
}

}  // namespace bubblescope::storage
