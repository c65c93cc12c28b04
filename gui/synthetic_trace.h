// A generated pipeline-parallel trace for benchmarks and screenshots: the
// schedule of a layout (engine/layout schedules) replayed by the cost-model
// simulator, repeated step after step on pp × dp ranks, written with
// storage::TraceWriter as a run with source "simulated".
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"
#include "engine/layout/schedule.h"

namespace bubblescope::gui {

struct SyntheticTraceOptions {
  layout::ScheduleKind schedule = layout::ScheduleKind::kOneFOneB;
  int32_t pp = 4;
  int32_t dp = 2;
  int32_t microBatches = 8;
  int32_t virtualChunks = 1;
  int64_t targetEvents = 100000;  // steps are added until the run has at least this many
  int64_t forwardNs = 2'000'000;  // t_F of one micro-batch on one stage
  uint32_t seed = 7;
};

// Writes one run into `path` (created or appended); returns its run id.
Result<int64_t> writeSyntheticTrace(const std::string& path, const SyntheticTraceOptions& options);

}  // namespace bubblescope::gui
