// The floor `bubblescope-cli bench store` measures the trace writer against:
// the same event rows into the same table of an existing trace file, through
// the writer's own INSERT (event_row.h), one prepared statement in one
// transaction, with no string interning, step index or progress rows. For
// benchmarks only: the file it leaves is not a complete trace (its names are
// pre-assigned ids).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "common/status.h"
#include "trace_model/event.h"

namespace bubblescope::storage {

// Appends `events` to run `runId` of the trace file at `path` (already made by
// TraceWriter); event i gets name id 1 + i % nameCount. Errors name the file.
Status insertEventsBaseline(const std::string& path, int64_t runId,
                            std::span<const trace_model::Event> events, int64_t nameCount);

}  // namespace bubblescope::storage
