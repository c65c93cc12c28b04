// Event blocks: how schema v6 stores events (docs/trace-format.md,
// `event_blocks`). A block holds up to kBlockMaxEvents events of one rank of
// one run, sorted by start (ties in the order they were appended), in one
// BLOB: per event the start as a delta from the previous one, the duration,
// then a bit mask of the fields that differ from the previous event and those
// fields alone, all as LEB128 varints (signed ones zigzag-encoded). The mask's
// bits: 0 the name, then each attribute's `bit` of trace_model/event.h's list.
// Private to storage/.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "common/status.h"
#include "trace_model/event.h"

namespace bubblescope::storage {

// An event as stored: its name as a strings.id, its rank implied by its
// block, its attributes (trace_model/event.h's list) as their integers under
// Event's names.
struct StoredEvent {
  int64_t startNs = 0;
  int64_t endNs = 0;
  int64_t nameId = 0;
#define BUBBLESCOPE_STORED_MEMBER(Type, member, initial, ...) \
  trace_model::IntegerOf<Type> member = trace_model::integerOf(initial);
  BUBBLESCOPE_EVENT_FIELDS(BUBBLESCOPE_EVENT_SKIP, BUBBLESCOPE_STORED_MEMBER)
#undef BUBBLESCOPE_STORED_MEMBER

  bool operator==(const StoredEvent&) const = default;
};

StoredEvent storedEvent(const trace_model::Event& e, int64_t nameId);
// The event of `rank` named `name` (the string of s.nameId).
void toEvent(const StoredEvent& s, int32_t rank, trace_model::Event& out);

inline constexpr int64_t kBlockMaxEvents = 256;
// A block is closed once its data reaches this size: several blocks share a
// 4 KiB page, and a window query decodes little beyond its window.
inline constexpr size_t kBlockTargetBytes = 1024;

struct EventBlock {
  int64_t firstStartNs = 0;    // the start of its first event (the earliest)
  int64_t maxEndNs = 0;        // the latest end of its events
  int64_t count = 0;           // events in it
  int64_t minCorrelation = 0;  // least and greatest non-zero correlation id;
  int64_t maxCorrelation = 0;  // both 0 when no event is linked
  std::vector<uint8_t> data;
};

// Encodes `events` (one rank, sorted by start) into consecutive blocks and
// calls `emit` with each; stops at emit's first error.
Status encodeBlocks(std::span<const StoredEvent> events,
                    const std::function<Status(const EventBlock&)>& emit);

// Appends the `count` events of a block to `out`. Data that does not decode
// to exactly `count` events gives Corrupt("event block …"): callers add the
// file and the block id.
Status decodeBlock(std::span<const uint8_t> data, int64_t firstStartNs, int64_t count,
                   std::vector<StoredEvent>& out);

}  // namespace bubblescope::storage
