#include "storage/event_block_table.h"

#include "storage/event_rows.h"

#include <algorithm>
#include <limits>
#include <string>
#include <unordered_map>

namespace bubblescope::storage {

Status insertRankBlocks(SqliteStatement& insert, int64_t runId, int32_t rank,
                        std::vector<StoredEvent>& events, int64_t& maxBlockNs) {
  std::stable_sort(events.begin(), events.end(), [](const StoredEvent& a, const StoredEvent& b) {
    return a.startNs < b.startNs;
  });
  return encodeBlocks(events, [&](const EventBlock& b) {
    maxBlockNs = std::max(maxBlockNs, b.maxEndNs - b.firstStartNs);
    insert.bind(1, runId);
    insert.bind(2, int64_t{rank});
    insert.bind(3, b.firstStartNs);
    insert.bind(4, b.maxEndNs);
    insert.bind(5, b.count);
    insert.bind(6, b.minCorrelation);
    insert.bind(7, b.maxCorrelation);
    insert.bindBlob(8, b.data);
    return insert.run();
  });
}

Status moveEventRowsIntoBlocks(SqliteDb& db) {
  BS_ASSIGN_OR_RETURN(
      auto rows,
      db.prepare("SELECT run, " + eventRowColumns(kLastEventRowVersion) +
                 " FROM events ORDER BY run, rank, start_ns, id"));
  BS_ASSIGN_OR_RETURN(auto insert, db.prepare(kInsertBlockSql));
  // Input is sorted, so a rank's events are flushed every kChunk rows without
  // overlapping blocks, and memory stays bounded however big a rank is.
  constexpr size_t kChunk = 65536;
  std::vector<StoredEvent> pending;
  std::unordered_map<int64_t, int64_t> maxBlockNs;  // per run
  int64_t run = 0, rank = 0;
  auto flush = [&]() -> Status {
    if (pending.empty()) return Status::ok();
    Status s = insertRankBlocks(insert, run, static_cast<int32_t>(rank), pending, maxBlockNs[run]);
    pending.clear();
    return s;
  };
  while (true) {
    auto more = rows.step();
    if (!more.isOk()) return more.status();
    if (!*more) break;
    StoredEvent e;
    int64_t rowRank = 0;
    readEventRow(rows, 1, rowRank, e);
    const int64_t rowRun = rows.columnInt(0);
    if (rowRank < 0 || rowRank > std::numeric_limits<int32_t>::max()) {
      return Status::corrupt(db.path() + " is corrupt: rank " + std::to_string(rowRank) +
                             " is outside 0.." +
                             std::to_string(std::numeric_limits<int32_t>::max()));
    }
    if (rowRun != run || rowRank != rank || pending.size() == kChunk) {
      BS_RETURN_IF_ERROR(flush());
      run = rowRun;
      rank = rowRank;
    }
    pending.push_back(e);
  }
  BS_RETURN_IF_ERROR(flush());
  rows.reset();
  BS_ASSIGN_OR_RETURN(auto update, db.prepare("UPDATE runs SET max_block_ns = ? WHERE id = ?"));
  for (const auto& [runId, ns] : maxBlockNs) {
    update.bind(1, ns);
    update.bind(2, runId);
    BS_RETURN_IF_ERROR(update.run());
  }
  return db.exec("DROP TABLE events");
}

}  // namespace bubblescope::storage
