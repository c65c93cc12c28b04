// The timeline's switch to the ideal-hardware replay (issue 15 section 5,
// docs/prediction.md): on an oversubscribed run the toggle swaps the
// timeline's data for the run's own thread-CPU op costs replayed through
// the simulator, the numbers the report's bubble_replayed comes from, and
// back; runs that cannot be replayed say why.
#include "gui/timeline_replay.h"

#include <gtest/gtest.h>

#include <QCheckBox>
#include <cmath>

#include "gui/main_window.h"
#include "gui/timeline_panel.h"
#include "storage/analysis/ideal_replay.h"
#include "storage/analysis/measured_ops.h"
#include "storage/simulated_run.h"
#include "storage/trace_reader.h"
#include "tests/gui/oversubscribed_run.h"

namespace bubblescope::gui {
namespace {

using bubblescope::testing::kMs;
using bubblescope::testing::oversubscribedRun;
using bubblescope::testing::TraceBuilder;

// The compute span of `rank` under tNs in the panel's current window.
std::optional<trace_model::Event> computeAt(TimelinePanel& panel, int32_t rank, double tNs) {
  TimelineModel* m = panel.model();
  const int row = m->rowOf(rank, trace_model::Lane::kCompute);
  (void)m->frame(m->startNs(), m->endNs(), 1000, 0, static_cast<int>(m->rows().size()) - 1);
  return m->eventAt(row, tNs, 0);
}

double stepLengthNs(const trace_model::StepWindow& w) {
  return static_cast<double>(w.endNs - w.startNs);
}

TEST(TimelineReplay, TheToggleSwapsTheTimelineForTheReplayedRunAndBack) {
  TraceBuilder b;
  const int64_t run = b.run(oversubscribedRun(true));
  MainWindow window;
  window.setHeadless(true);
  ASSERT_TRUE(window.openFile(QString::fromStdString(b.path())).isOk());
  ASSERT_TRUE(window.showRun(run).isOk());
  TimelinePanel* panel = window.timeline();
  ASSERT_TRUE(panel->ingestAll().isOk());
  auto* toggle = window.findChild<QCheckBox*>("idealReplay");
  ASSERT_NE(toggle, nullptr);
  ASSERT_TRUE(toggle->isEnabled()) << window.idealReplay()->whyUnavailable().toStdString();
  EXPECT_TRUE(window.idealReplay()->infoText().contains("4 ranks on 2 cores"));

  // Measured: two steps of 22 ms; stage 1's forward of micro-batch 0 is
  // stretched to 3 ms (1..4 ms).
  ASSERT_EQ(panel->model()->steps().size(), 2u);
  EXPECT_DOUBLE_EQ(stepLengthNs(panel->model()->steps()[1]), 22.0 * kMs);
  auto measured = computeAt(*panel, 1, 2.5 * kMs);
  ASSERT_TRUE(measured.has_value());
  EXPECT_EQ(measured->endNs - measured->startNs, 3 * kMs);

  toggle->click();
  ASSERT_TRUE(window.idealReplay()->replayShown())
      << window.idealReplay()->infoText().toStdString();
  ASSERT_TRUE(panel->ingestAll().isOk());
  const storage::RunRecord& drawn = panel->model()->run();
  EXPECT_TRUE(drawn.info.simulated);
  EXPECT_EQ(drawn.info.name, "ideal-hardware replay of run 1 (gpipe cpu)");
  EXPECT_EQ(window.shownRun().id, run);  // the window still shows the measured run
  EXPECT_TRUE(window.timelineTitle().contains("ideal-hardware replay"));

  // The replayed run is the analysis' replay: its step 1 (the first step is
  // skipped as warm-up) lasts the replayed step, GPipe p = m = 2 at the CPU
  // costs F = 1 ms, B = 2 ms: (m + p - 1)(F + B) = 9 ms.
  auto reader = storage::TraceReader::open(b.path());
  ASSERT_TRUE(reader.isOk());
  auto ops = analysis::measureOps(**reader, run);
  ASSERT_TRUE(ops.isOk());
  auto replay = analysis::replayIdealHardware(*ops);
  ASSERT_TRUE(replay.isOk());
  ASSERT_TRUE(window.idealReplay()->replay().has_value());
  EXPECT_DOUBLE_EQ(window.idealReplay()->replay()->stepNs, replay->stepNs);
  ASSERT_EQ(panel->model()->steps().size(), 1u);
  EXPECT_EQ(panel->model()->steps()[0].step, 1);
  EXPECT_NEAR(stepLengthNs(panel->model()->steps()[0]), replay->stepNs, 1.0);
  EXPECT_NEAR(replay->stepNs, 9.0 * kMs, 1e3);
  // Stage 1's forward of micro-batch 0 now takes its CPU time, 1 ms (1..2 ms).
  auto replayed = computeAt(*panel, 1, 1.5 * kMs);
  ASSERT_TRUE(replayed.has_value());
  EXPECT_EQ(replayed->kind, trace_model::EventKind::kForward);
  EXPECT_EQ(replayed->microBatch, 0);
  EXPECT_EQ(replayed->endNs - replayed->startNs, 1 * kMs);
  EXPECT_TRUE(window.idealReplay()->infoText().contains("step 9.00 ms, measured 22.0 ms"))
      << window.idealReplay()->infoText().toStdString();
  EXPECT_TRUE(window.idealReplay()->infoText().contains("33.3 / 33.3 %"))
      << window.idealReplay()->infoText().toStdString();

  toggle->click();
  EXPECT_FALSE(window.idealReplay()->replayShown());
  ASSERT_TRUE(panel->ingestAll().isOk());
  EXPECT_EQ(panel->model()->run().id, run);
  EXPECT_FALSE(panel->model()->run().info.simulated);
  ASSERT_EQ(panel->model()->steps().size(), 2u);
  EXPECT_DOUBLE_EQ(stepLengthNs(panel->model()->steps()[1]), 22.0 * kMs);
}

TEST(TimelineReplay, RunsThatCannotBeReplayedSayWhy) {
  TraceBuilder b;
  const int64_t wallOnly = b.run(oversubscribedRun(false));
  MainWindow window;
  window.setHeadless(true);
  ASSERT_TRUE(window.openFile(QString::fromStdString(b.path())).isOk());
  ASSERT_TRUE(window.showRun(wallOnly).isOk());
  auto* toggle = window.findChild<QCheckBox*>("idealReplay");
  ASSERT_TRUE(toggle->isEnabled());
  toggle->click();  // no thread CPU times: the replay fails, the measured run stays
  EXPECT_FALSE(window.idealReplay()->replayShown());
  EXPECT_FALSE(toggle->isChecked());
  EXPECT_EQ(window.timeline()->model()->run().id, wallOnly);
  EXPECT_TRUE(window.idealReplay()->infoText().contains("no thread CPU time"))
      << window.idealReplay()->infoText().toStdString();

  // A simulated run is not measured: nothing to replay.
  auto writer = storage::TraceWriter::open(b.path());
  ASSERT_TRUE(writer.isOk());
  auto simulated = storage::writeSimulatedRun(**writer, bubblescope::testing::gpipe2x2(), {});
  ASSERT_TRUE(simulated.isOk()) << simulated.status().message();
  writer->reset();
  ASSERT_TRUE(window.reloadRuns().isOk());
  ASSERT_TRUE(window.showRun(*simulated).isOk());
  EXPECT_FALSE(toggle->isEnabled());
  EXPECT_TRUE(window.idealReplay()->whyUnavailable().contains("only a measured run is replayed"))
      << window.idealReplay()->whyUnavailable().toStdString();
  EXPECT_FALSE(window.idealReplay()->setReplayShown(true).isOk());
}

}  // namespace
}  // namespace bubblescope::gui
