#include "storage/event_block_reader.h"

#include <algorithm>
#include <string>
#include <tuple>

namespace bubblescope::storage {
namespace {

constexpr int64_t kCursorBlockStride = 1024;  // > kBlockMaxEvents
static_assert(kBlockMaxEvents < kCursorBlockStride);

// An event with its place in append order: the order of equal starts.
struct PlacedEvent {
  StoredEvent event;
  int64_t block = 0;
  int64_t index = 0;
};

bool placedBefore(const PlacedEvent& a, const PlacedEvent& b) {
  return std::tie(a.event.startNs, a.block, a.index) < std::tie(b.event.startNs, b.block, b.index);
}

// Decodes the block in the current row of `s` (columns: id, first_start_ns,
// count, data from `first`) into `out`; a damaged block names the file.
Status decodeRow(SqliteDb& db, SqliteStatement& s, int first, std::vector<StoredEvent>& out) {
  const int64_t id = s.columnInt(first);
  const int64_t count = s.columnInt(first + 2);
  Status decoded = count < 0 || count > kBlockMaxEvents
                       ? Status::corrupt("event block holds " + std::to_string(count) + " events")
                       : decodeBlock(s.columnBlob(first + 3), s.columnInt(first + 1), count, out);
  if (decoded.isOk()) return decoded;
  return Status::corrupt(db.path() + " is corrupt: " + decoded.message() + " (block " +
                         std::to_string(id) + ")");
}

Status checkRank(SqliteDb& db, int64_t rank) {
  if (rank >= 0 && rank <= std::numeric_limits<int32_t>::max()) return Status::ok();
  return Status::corrupt(db.path() + " is corrupt: rank " + std::to_string(rank) +
                         " is outside 0.." + std::to_string(std::numeric_limits<int32_t>::max()));
}

}  // namespace

Status visitRankBlocks(SqliteDb& db, int64_t runId, int32_t rank, const BlockRange& range,
                       const StoredEventVisitor& visit) {
  BS_ASSIGN_OR_RETURN(auto s, db.prepare("SELECT id, first_start_ns, count, data FROM event_blocks "
                                         "WHERE run = ? AND rank = ? AND first_start_ns >= ? AND "
                                         "first_start_ns < ? AND max_end_ns > ? "
                                         "ORDER BY first_start_ns, id"));
  s.bind(1, runId);
  s.bind(2, int64_t{rank});
  s.bind(3, range.firstStartFrom);
  s.bind(4, range.firstStartBefore);
  s.bind(5, range.endAfter);
  // Blocks come by first start: an event that starts before the next
  // block's first start comes before every event still to be read.
  std::vector<PlacedEvent> pending, merged;
  size_t head = 0;
  std::vector<StoredEvent> decoded;
  auto emitBefore = [&](int64_t startNs) -> Status {
    for (; head < pending.size() && pending[head].event.startNs < startNs; ++head) {
      BS_RETURN_IF_ERROR(visit(pending[head].event));
    }
    return Status::ok();
  };
  while (true) {
    auto more = s.step();
    if (!more.isOk()) return more.status();
    if (!*more) break;
    BS_RETURN_IF_ERROR(emitBefore(s.columnInt(1)));
    decoded.clear();
    BS_RETURN_IF_ERROR(decodeRow(db, s, 0, decoded));
    const int64_t block = s.columnInt(0);
    merged.clear();
    size_t i = 0;
    for (const StoredEvent& e : decoded) {
      const PlacedEvent placed{e, block, static_cast<int64_t>(i++)};
      while (head < pending.size() && placedBefore(pending[head], placed)) {
        merged.push_back(pending[head++]);
      }
      merged.push_back(placed);
    }
    merged.insert(merged.end(), pending.begin() + static_cast<std::ptrdiff_t>(head), pending.end());
    std::swap(pending, merged);
    head = 0;
  }
  for (; head < pending.size(); ++head) BS_RETURN_IF_ERROR(visit(pending[head].event));
  return Status::ok();
}

Status linkedStoredEvents(SqliteDb& db, int64_t runId, int32_t rank, int64_t correlationId,
                          std::vector<StoredEvent>& out) {
  // `max_correlation != 0` lets SQLite use the partial index.
  BS_ASSIGN_OR_RETURN(auto s, db.prepare("SELECT id, first_start_ns, count, data FROM event_blocks "
                                         "WHERE run = ? AND rank = ? AND max_correlation >= ? AND "
                                         "min_correlation <= ? AND max_correlation != 0"));
  s.bind(1, runId);
  s.bind(2, int64_t{rank});
  s.bind(3, correlationId);
  s.bind(4, correlationId);
  std::vector<PlacedEvent> found;
  std::vector<StoredEvent> decoded;
  while (true) {
    auto more = s.step();
    if (!more.isOk()) return more.status();
    if (!*more) break;
    decoded.clear();
    BS_RETURN_IF_ERROR(decodeRow(db, s, 0, decoded));
    for (size_t i = 0; i < decoded.size(); ++i) {
      if (decoded[i].correlationId == correlationId) {
        found.push_back({decoded[i], s.columnInt(0), static_cast<int64_t>(i)});
      }
    }
  }
  std::sort(found.begin(), found.end(), placedBefore);
  for (const PlacedEvent& p : found) out.push_back(p.event);
  return Status::ok();
}

Status storedEventsAfter(SqliteDb& db, int64_t runId, int64_t& cursor, int64_t limit,
                         std::vector<StoredEvent>& events, std::vector<int32_t>& ranks) {
  // `+run` keeps SQLite on the rowid range (see TraceReader::eventsAfter).
  BS_ASSIGN_OR_RETURN(auto s, db.prepare("SELECT id, first_start_ns, count, data, rank FROM "
                                         "event_blocks WHERE id >= ? AND +run = ? ORDER BY id"));
  s.bind(1, cursor / kCursorBlockStride);
  s.bind(2, runId);
  std::vector<StoredEvent> decoded;
  while (static_cast<int64_t>(events.size()) < limit) {
    auto more = s.step();
    if (!more.isOk()) return more.status();
    if (!*more) break;
    const int64_t block = s.columnInt(0);
    BS_RETURN_IF_ERROR(checkRank(db, s.columnInt(4)));
    const auto rank = static_cast<int32_t>(s.columnInt(4));
    decoded.clear();
    BS_RETURN_IF_ERROR(decodeRow(db, s, 0, decoded));
    int64_t taken = block == cursor / kCursorBlockStride ? cursor % kCursorBlockStride : 0;
    for (; taken < static_cast<int64_t>(decoded.size()) &&
           static_cast<int64_t>(events.size()) < limit;
         ++taken) {
      events.push_back(decoded[taken]);
      ranks.push_back(rank);
    }
    cursor = block * kCursorBlockStride + taken;
  }
  return Status::ok();
}

}  // namespace bubblescope::storage
