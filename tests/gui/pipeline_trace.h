// A hand-built two-stage pipeline run whose analysis is known exactly, for
// the chart, metrics and main-window tests.
//
// Two steps of 1000 ns (step 1 is step 0 shifted by 1000 ns), layout gpipe
// pp 2, m 2 (formula bubble 1/3):
//   rank 0 (stage 0): forward [0,200), backward [600,1000): compute 600,
//     idle 400 -> bubble 0.4, utilisation 0.6.
//   rank 1 (stage 1): wait [0,100), forward [100,300), backward [300,700),
//     dp all-reduce [700,800) (comm lane): compute 600, comm 100 (all
//     exposed), wait 100, idle 200 -> bubble 0.3, utilisation 0.6.
// Losses 5.0 and 4.5.
#pragma once

#include <string>

#include "tests/gui/gui_trace.h"
#include "tests/storage/temp_dir.h"

namespace bubblescope::testing {

inline constexpr const char* kPipelineLayout =
    R"({"dp":1,"tp":1,"pp":2,"schedule":"gpipe","micro_batches":2,"micro_batch_size":1,)"
    R"("steps":2,"model":{"preset":"tiny"}})";

// Appends one pipeline run (shifted by offsetNs, every time and duration
// multiplied by `slower`) to `path`; returns nothing, the run is finished.
inline void writePipelineRun(const std::string& path, int64_t offsetNs = 0,
                             const std::string& layout = kPipelineLayout, int64_t slower = 1) {
  using trace_model::EventKind;
  using trace_model::Lane;
  std::vector<trace_model::Event> events;
  std::vector<trace_model::StepRecord> steps;
  for (int step = 0; step < 2; ++step) {
    const int64_t t = offsetNs + step * 1000 * slower;
    const int64_t k = slower;
    events.push_back(guiSpan(0, Lane::kCompute, EventKind::kForward, t, t + 200 * k, step, 0));
    events.push_back(
        guiSpan(0, Lane::kCompute, EventKind::kBackward, t + 600 * k, t + 1000 * k, step, 0));
    events.push_back(guiSpan(1, Lane::kPipeline, EventKind::kWait, t, t + 100 * k, step, 0));
    events.push_back(
        guiSpan(1, Lane::kCompute, EventKind::kForward, t + 100 * k, t + 300 * k, step, 0));
    events.push_back(
        guiSpan(1, Lane::kCompute, EventKind::kBackward, t + 300 * k, t + 700 * k, step, 0));
    trace_model::Event ar =
        guiSpan(1, Lane::kCommunication, EventKind::kAllReduce, t + 700 * k, t + 800 * k, step);
    ar.dim = trace_model::ParallelDim::kDp;
    ar.bytes = 1000;
    events.push_back(ar);
    const double loss = step == 0 ? 5.0 : 4.5;
    steps.push_back({0, step, loss, 64, t, t + 1000 * k});
    steps.push_back({1, step, loss, 64, t, t + 1000 * k});
  }
  auto writer = writeGuiTrace(path, {guiRank(0, 0), guiRank(1, 1)}, events, steps, layout);
  EXPECT_TRUE(writer->finishRun(storage::RunStatus::kFinished).isOk());
}

}  // namespace bubblescope::testing
