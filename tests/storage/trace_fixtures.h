// Deterministic events for storage tests: every field set, no two alike.
#pragma once

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "trace_model/event.h"

namespace bubblescope::testing {

inline trace_model::Event makeEvent(int64_t i, int32_t ranks = 4) {
  trace_model::Event e;
  e.rank = static_cast<int32_t>(i % ranks);
  e.lane = static_cast<trace_model::Lane>(i % 3);
  e.kind = static_cast<trace_model::EventKind>(i % trace_model::kEventKindCount);
  e.name = "op." + std::to_string(i % 7);
  e.startNs = 1000 * i;
  e.endNs = 1000 * i + 500 + (i % 5);
  e.step = static_cast<int32_t>(i / 100);
  e.microBatch = static_cast<int32_t>(i % 8);
  e.stage = static_cast<int32_t>(i % 4);
  e.chunk = static_cast<int32_t>(i % 2);
  e.dim = static_cast<trace_model::ParallelDim>(i % trace_model::kParallelDimCount);
  e.bytes = 4096 * i + 1;
  e.flops = 1000000007LL * i;
  e.peer = static_cast<int32_t>((i + 1) % ranks);
  e.correlationId = i % 3 ? 0 : 5000000000LL + i;  // some linked, beyond 32 bits
  e.cpuNs = i % 4 ? -1 : 400 + i;                  // some measured thread CPU times
  return e;
}

inline std::vector<trace_model::Event> makeEvents(int64_t first, int64_t count, int32_t ranks = 4) {
  std::vector<trace_model::Event> events;
  events.reserve(count);
  for (int64_t i = first; i < first + count; ++i) events.push_back(makeEvent(i, ranks));
  return events;
}

// `events` in one canonical order (every field compared): TraceReader::
// eventsAfter returns a run's events block by block (a rank's events of one
// committed batch in start order), not in the order they were appended.
inline std::vector<trace_model::Event> sortedEvents(std::vector<trace_model::Event> events) {
  auto fields = [](const trace_model::Event& e) {
    return std::tie(e.rank, e.startNs, e.endNs, e.name, e.kind, e.lane, e.step, e.microBatch,
                    e.stage, e.chunk, e.dim, e.bytes, e.flops, e.peer, e.correlationId, e.cpuNs);
  };
  std::sort(events.begin(), events.end(),
            [&](const trace_model::Event& a, const trace_model::Event& b) {
              return fields(a) < fields(b);
            });
  return events;
}

}  // namespace bubblescope::testing
