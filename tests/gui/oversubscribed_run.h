// A hand-built GPipe pp2 m2 run on a host with 2 cores for 4 ranks, for the
// tests of the ideal-hardware replay in the app (teaching lab, timeline).
#pragma once

#include <nlohmann/json.hpp>

#include "engine/layout/layout.h"
#include "tests/analysis/trace_builder.h"

namespace bubblescope::testing {

inline constexpr int64_t kMs = 1'000'000;

inline layout::Layout gpipe2x2() {
  layout::Layout l;
  l.model = *layout::modelPreset("small");
  l.schedule = layout::ScheduleKind::kGPipe;
  l.pp = 2;
  l.microBatches = 2;
  return l;
}

// A gpipe pp2 m2 run on a host with 2 cores for 4 ranks, 2 steps of 22 ms.
// True costs (thread CPU): F = 1 ms, B = 2 ms; stage 1's wall times are
// stretched 3x by the sharing. withCpu false: no thread CPU times recorded.
inline TraceBuilder::RunSpec oversubscribedRun(bool withCpu) {
  using trace_model::EventKind;
  TraceBuilder::RunSpec spec;
  spec.name = withCpu ? "gpipe cpu" : "gpipe wall only";
  spec.layoutJson = layout::toJson(gpipe2x2()).dump();
  spec.worldSize = 2;
  for (int32_t k = 0; k < 2; ++k) {
    storage::RankInfo r = rankInfo(k, 0, 0, k);
    r.coresOnHost = 2;
    r.ranksOnHost = 4;
    spec.ranks.push_back(r);
  }
  struct Op {
    int32_t stage, microBatch;
    EventKind kind;
    int64_t startMs, endMs;
  };
  // Stage 0 at its true speed, stage 1 three times slower.
  const Op ops[] = {{0, 0, EventKind::kForward, 0, 1},    {0, 1, EventKind::kForward, 1, 2},
                    {1, 0, EventKind::kForward, 1, 4},    {1, 1, EventKind::kForward, 4, 7},
                    {1, 0, EventKind::kBackward, 7, 13},  {1, 1, EventKind::kBackward, 13, 19},
                    {0, 0, EventKind::kBackward, 13, 15}, {0, 1, EventKind::kBackward, 19, 21}};
  constexpr int64_t kStepMs = 22;
  for (int32_t step = 0; step < 2; ++step) {
    const int64_t base = step * kStepMs * kMs;
    for (const Op& o : ops) {
      trace_model::Event e =
          span(o.stage, o.kind, base + o.startMs * kMs, base + o.endMs * kMs, step);
      e.name = o.kind == EventKind::kForward ? "forward" : "backward";
      e.stage = o.stage;
      e.microBatch = o.microBatch;
      e.chunk = 0;
      e.cpuNs = withCpu ? (o.kind == EventKind::kForward ? 1 : 2) * kMs : -1;  // -1: none
      spec.events.push_back(e);
    }
    for (int32_t k = 0; k < 2; ++k) {
      spec.steps.push_back(stepRecord(k, step, base, base + kStepMs * kMs));
    }
  }
  return spec;
}

}  // namespace bubblescope::testing
