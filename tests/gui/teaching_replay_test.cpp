// The teaching lab on an oversubscribed run: its step is drawn stretched,
// and its ideal-hardware replay (analysis::replayIdealHardware: the run's
// thread-CPU op costs through the simulator) is shown beside it, or why
// there is none.
#include <gtest/gtest.h>

#include <QApplication>
#include <nlohmann/json.hpp>

#include "engine/layout/layout.h"
#include "gui/teaching_lab.h"
#include "gui/teaching_painter.h"
#include "storage/trace_reader.h"
#include "tests/analysis/trace_builder.h"

namespace bubblescope::gui {
namespace {

using bubblescope::testing::TraceBuilder;
using trace_model::EventKind;

constexpr int64_t kMs = 1'000'000;

layout::Layout gpipe2x2() {
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
TraceBuilder::RunSpec oversubscribedRun(bool withCpu) {
  TraceBuilder::RunSpec spec;
  spec.name = withCpu ? "gpipe cpu" : "gpipe wall only";
  spec.layoutJson = layout::toJson(gpipe2x2()).dump();
  spec.worldSize = 2;
  for (int32_t k = 0; k < 2; ++k) {
    storage::RankInfo r = bubblescope::testing::rankInfo(k, 0, 0, k);
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
      trace_model::Event e = bubblescope::testing::span(o.stage, o.kind, base + o.startMs * kMs,
                                                        base + o.endMs * kMs, step);
      e.name = o.kind == EventKind::kForward ? "forward" : "backward";
      e.stage = o.stage;
      e.microBatch = o.microBatch;
      e.chunk = 0;
      e.cpuNs = withCpu ? (o.kind == EventKind::kForward ? 1 : 2) * kMs : -1;  // -1: none
      spec.events.push_back(e);
    }
    for (int32_t k = 0; k < 2; ++k) {
      spec.steps.push_back(bubblescope::testing::stepRecord(k, step, base, base + kStepMs * kMs));
    }
  }
  return spec;
}

TEST(TeachingLab, OversubscribedRunsShowTheirIdealHardwareReplay) {
  TraceBuilder b;
  const int64_t withCpu = b.run(oversubscribedRun(true));
  const int64_t wallOnly = b.run(oversubscribedRun(false));
  auto reader = storage::TraceReader::open(b.path());
  ASSERT_TRUE(reader.isOk()) << reader.status().message();

  TeachingLab lab;
  lab.setMeasuredRun(reader->get(), withCpu);
  ASSERT_TRUE(lab.simulate(gpipe2x2()).isOk());
  const TeachingLabModel& m = lab.model();
  ASSERT_TRUE(m.measured().has_value());
  ASSERT_FALSE(m.measured()->oversubscribed.empty());
  EXPECT_FALSE(m.sameTimeScale());  // the stretched step is drawn to the ideal length
  // Replayed at its CPU costs, GPipe with p = m = 2, t_B = 2 t_F: each stage
  // idles (p-1)(t_F+t_B) of (m+p-1)(t_F+t_B) = 3 ms of 9 ms, as the formula
  // says; the measured stretch (stage 0 idle 16 of 22 ms) is gone.
  ASSERT_TRUE(m.replay().has_value()) << m.oversubscribedNote().toStdString();
  ASSERT_EQ(m.replay()->bubble.size(), 2u);
  EXPECT_NEAR(m.replay()->bubble[0], 1.0 / 3.0, 1e-6);
  EXPECT_NEAR(m.replay()->bubble[1], 1.0 / 3.0, 1e-6);
  EXPECT_NEAR(m.replay()->stepNs, 9.0 * kMs, 1e3);
  EXPECT_TRUE(m.oversubscribedNote().contains("its replay on ideal hardware is below"))
      << m.oversubscribedNote().toStdString();
  EXPECT_TRUE(m.replayNote().endsWith("step 9.00 ms · bubble per stage 33% · 33%"))
      << m.replayNote().toStdString();
  // The replay takes a line of its own under the note.
  TeachingLabModel noReplay = m;
  noReplay.setReplay(std::nullopt, "none");
  EXPECT_EQ(teachingGeometry(m, 1200, QApplication::font()).height,
            teachingGeometry(noReplay, 1200, QApplication::font()).height +
                TeachingGeometry::kNoteHeight);

  // A run without thread CPU times has no replay, and the note says why.
  lab.setMeasuredRun(reader->get(), wallOnly);
  ASSERT_TRUE(lab.simulate(gpipe2x2()).isOk());
  EXPECT_FALSE(m.replay().has_value());
  EXPECT_TRUE(m.replayNote().isEmpty());
  EXPECT_TRUE(m.oversubscribedNote().contains("no ideal-hardware replay: "))
      << m.oversubscribedNote().toStdString();
  EXPECT_FALSE(m.oversubscribedNote().contains("not computed"));
}

}  // namespace
}  // namespace bubblescope::gui
