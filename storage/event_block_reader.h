// Reading the event_blocks table of schema v6 (event_block.h): a rank's
// events in start order, merged across blocks that overlap in time, and the
// blocks appended after a cursor. Private to storage/: TraceReader turns the
// stored events into trace_model::Event.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "common/status.h"
#include "storage/event_block.h"
#include "storage/sqlite_db.h"

namespace bubblescope::storage {

using StoredEventVisitor = std::function<Status(const StoredEvent&)>;

// Which blocks of a rank to read: first_start_ns in [firstStartFrom,
// firstStartBefore) and max_end_ns > endAfter (the index bounds the first).
struct BlockRange {
  int64_t firstStartFrom = std::numeric_limits<int64_t>::min();
  int64_t firstStartBefore = std::numeric_limits<int64_t>::max();
  int64_t endAfter = std::numeric_limits<int64_t>::min();
};

// Calls `visit` with every event of the blocks of (runId, rank) in `range`,
// in start order, ties in append order (block id, then place in the block).
// Memory: the events of the blocks that overlap in time, usually one block.
Status visitRankBlocks(SqliteDb& db, int64_t runId, int32_t rank, const BlockRange& range,
                       const StoredEventVisitor& visit);

// The events of (runId, rank) whose correlation is `correlationId` (not 0),
// in start order; through the index on the blocks' correlation ranges.
Status linkedStoredEvents(SqliteDb& db, int64_t runId, int32_t rank, int64_t correlationId,
                          std::vector<StoredEvent>& out);

// Up to `limit` events appended after `cursor` (0: from the start), block by
// block in append order, each block in start order; `cursor` moves past the
// last one returned. A cursor is (block id) * 1024 + (events of it taken).
// `ranks` receives each event's rank.
Status storedEventsAfter(SqliteDb& db, int64_t runId, int64_t& cursor, int64_t limit,
                         std::vector<StoredEvent>& events, std::vector<int32_t>& ranks);

}  // namespace bubblescope::storage
