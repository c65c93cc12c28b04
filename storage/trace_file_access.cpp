#include "storage/trace_file_access.h"

#include "storage/schema.h"
#include "storage/sqlite_db.h"

namespace bubblescope::storage {

Result<ReadingConnection> openForReading(const std::string& path) {
  BS_RETURN_IF_ERROR(checkTracePath(path));
  ReadingConnection c;
  BS_ASSIGN_OR_RETURN(c.db, SqliteDb::open(path, SqliteDb::Mode::kReadOnly));
  BS_RETURN_IF_ERROR(checkFileHeader(*c.db));
  BS_RETURN_IF_ERROR(checkTraceDatabase(*c.db, &c.schemaVersion));
  return c;
}

}  // namespace bubblescope::storage
