// The floor `bubblescope-cli bench store` measures the trace writer against:
// one event per row, as schema v5 stored them (the 17 columns of its
// `events` table and its (run, rank, start_ns) index, recreated here as
// `baseline_events` in an existing trace file), one prepared INSERT in one
// transaction, with no string interning, step index or progress rows. For
// benchmarks only: the file it leaves is not a trace its readers read
// (docs/benchmarks.md, "Trace store").
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
