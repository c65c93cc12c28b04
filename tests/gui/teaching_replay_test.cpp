// The teaching lab on an oversubscribed run: its step is drawn stretched,
// and its ideal-hardware replay (analysis::replayIdealHardware: the run's
// thread-CPU op costs through the simulator) is shown beside it, or why
// there is none; each measured row's label, an import's unknown stage too.
#include <gtest/gtest.h>

#include <QApplication>
#include <nlohmann/json.hpp>

#include "engine/layout/layout.h"
#include "gui/teaching_lab.h"
#include "gui/teaching_painter.h"
#include "storage/trace_reader.h"
#include "tests/analysis/trace_builder.h"
#include "tests/gui/oversubscribed_run.h"

namespace bubblescope::gui {
namespace {

using bubblescope::testing::gpipe2x2;
using bubblescope::testing::kMs;
using bubblescope::testing::oversubscribedRun;
using bubblescope::testing::TraceBuilder;

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

// A measured row names its stage and rank, and for an imported rank whose
// stage the trace does not say, "stage ?" (issue 31 walk: the lab drew an
// imported Kineto run as "stage -1 (rank 0) 73%").
TEST(TeachingLab, AMeasuredRowOfAnUnknownStageSaysSo) {
  analysis::MeasuredStage known;
  known.stage = 1;
  known.rank = 3;
  known.bubble = 0.24;
  EXPECT_EQ(measuredStageLabel(known), "stage 1 (rank 3) 24%");
  analysis::MeasuredStage imported;
  imported.stage = -1;
  imported.rank = 0;
  imported.bubble = 0.73;
  EXPECT_EQ(measuredStageLabel(imported), "rank 0 (stage ?) 73%");
}

}  // namespace
}  // namespace bubblescope::gui
