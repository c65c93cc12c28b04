// The event_blocks table of schema v6 (docs/trace-format.md): how the writer
// and the v5 -> v6 migration store a rank's events as blocks (event_block.h).
// Private to storage/.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "storage/event_block.h"
#include "storage/sqlite_db.h"

namespace bubblescope::storage {

inline constexpr const char* kInsertBlockSql =
    "INSERT INTO event_blocks(run, rank, first_start_ns, max_end_ns, count, min_correlation, "
    "max_correlation, data) VALUES (?,?,?,?,?,?,?,?)";

// Sorts `events` (one rank of run `runId`) by start, keeping the order of
// equal starts, and inserts them as blocks through `insert` (kInsertBlockSql).
// Raises `maxBlockNs` to the longest block (its latest end minus its first
// start): window queries look that far back.
Status insertRankBlocks(SqliteStatement& insert, int64_t runId, int32_t rank,
                        std::vector<StoredEvent>& events, int64_t& maxBlockNs);

// The v5 -> v6 step of migrateSchema: moves every row of the v5 `events`
// table into event_blocks (one scan in (run, rank, start_ns) order), sets
// runs.max_block_ns and drops `events`. Inside the caller's transaction.
Status moveEventRowsIntoBlocks(SqliteDb& db);

}  // namespace bubblescope::storage
