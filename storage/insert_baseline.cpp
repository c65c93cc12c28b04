#include "storage/insert_baseline.h"

#include "storage/event_row.h"
#include "storage/sqlite_db.h"

namespace bubblescope::storage {

Status insertEventsBaseline(const std::string& path, int64_t runId,
                            std::span<const trace_model::Event> events, int64_t nameCount) {
  if (nameCount < 1) return Status::invalidArgument("insert baseline: nameCount must be >= 1");
  BS_ASSIGN_OR_RETURN(auto db, SqliteDb::open(path, SqliteDb::Mode::kReadWriteCreate));
  BS_RETURN_IF_ERROR(db->exec("PRAGMA synchronous=NORMAL; BEGIN"));
  BS_ASSIGN_OR_RETURN(SqliteStatement insert, db->prepare(kInsertEventSql));
  for (size_t i = 0; i < events.size(); ++i) {
    bindEventRow(insert, runId, events[i], 1 + static_cast<int64_t>(i) % nameCount);
    BS_RETURN_IF_ERROR(insert.run());
  }
  return db->exec("COMMIT");
}

}  // namespace bubblescope::storage
