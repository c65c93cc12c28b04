// The app's own live-run path, offscreen: a run started from the layout
// editor runs `bubblescope-cli run` into the open file while the window reads
// it (the timeline's reader and the analysis worker's). The new run shows in
// the runs list with its steps and events, and the charts load for the old
// run and the new one (issue 13, item 1: a live run used to break the file
// the app had open).
#include <gtest/gtest.h>

#include <QApplication>
#include <QFile>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTest>
#include <nlohmann/json.hpp>

#include "gui/charts_panel.h"
#include "gui/layout_editor.h"
#include "gui/main_window.h"
#include "gui/process_run_launcher.h"
#include "gui/runs_table_model.h"
#include "gui/timeline_model.h"
#include "gui/timeline_panel.h"
#include "storage/trace_reader.h"
#include "tests/gui/hang_deadline.h"
#include "tests/gui/modal_box_closer.h"
#include "tests/gui/pipeline_trace.h"

// Waits are ASSERT_TRUE(QTest::qWaitFor(...)), not QTRY_*: those report to
// QTest, which gtest never hears of (a failed QTRY returned from the test,
// which then passed).
namespace bubblescope::gui {
namespace {

constexpr int kSteps = 3;

using bubblescope::testing::ModalBoxCloser;

TEST(MainWindowLiveRun, ARunStartedFromTheEditorShowsWithItsStepsEventsAndCharts) {
  const QString cli = QStringLiteral(BUBBLESCOPE_CLI_PATH);
  if (!QFileInfo(cli).isExecutable()) GTEST_SKIP() << "bubblescope-cli is not built";
  bubblescope::testing::TempDir dir;
  const std::string path = dir.file("runs.db");
  bubblescope::testing::writePipelineRun(path);  // the old run, 1
  const QString layoutPath = QString::fromStdString(dir.file("dp2.json"));
  {
    QFile f(layoutPath);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write(QStringLiteral(R"({"model": {"preset": "tiny"}, "dp": 2, "steps": %1})")
                .arg(kSteps)
                .toUtf8());
  }

  auto owned = std::make_unique<ProcessRunLauncher>(cli);
  QSignalSpy finished(owned.get(), &RunLauncher::finished);
  MainWindow window(std::move(owned));
  window.resize(1400, 900);
  ASSERT_TRUE(window.openFile(QString::fromStdString(path)).isOk());
  ASSERT_TRUE(
      QTest::qWaitFor([&] { return window.report() && window.report()->run.id == 1; }, testing::kHangMs));
  const RunRow before = window.runsModel()->rows().front();

  ASSERT_TRUE(window.layoutEditor()->loadFile(layoutPath).isOk());
  ASSERT_TRUE(window.layoutEditor()->isValid())
      << window.layoutEditor()->problems().join("; ").toStdString();
  ModalBoxCloser boxes;
  emit window.layoutEditor()->runRequested();
  // The window reads the file all along: the runs list, the timeline
  // following the new run, the analysis worker redoing its charts.
  ASSERT_TRUE(QTest::qWaitFor([&] { return finished.size() == 1; }, 180000));
  ASSERT_EQ(finished.at(0).at(0).toInt(), 0) << finished.at(0).at(1).toString().toStdString();
  ASSERT_TRUE(boxes.texts().isEmpty()) << boxes.texts().join("; ").toStdString();

  // The run is found by the list growing, not by its id.
  auto newRun = [&]() -> const RunRow* {
    const auto& rows = window.runsModel()->rows();
    return rows.size() == 2 && rows.back().health == storage::RunHealth::kFinished ? &rows.back()
                                                                                   : nullptr;
  };
  ASSERT_TRUE(QTest::qWaitFor([&] { return newRun() != nullptr; }, testing::kHangMs));
  const RunRow after = *newRun();
  // What the window shows is what the file holds (a reader of its own).
  {
    auto fresh = storage::TraceReader::open(path);
    ASSERT_TRUE(fresh.isOk()) << fresh.status().message();
    auto run = (*fresh)->run(after.id);
    ASSERT_TRUE(run.isOk()) << run.status().message();
    EXPECT_EQ(after.events, run->eventCount);
  }
  EXPECT_GT(after.id, before.id);
  EXPECT_EQ(after.worldSize, 2);
  EXPECT_EQ(after.steps, kSteps);
  EXPECT_GT(after.events, 0);
  EXPECT_TRUE(after.lastLoss.has_value());
  const RunRow old = window.runsModel()->rows().front();
  EXPECT_EQ(old.id, before.id);
  EXPECT_EQ(old.events, before.events) << "the old run is intact";
  EXPECT_EQ(old.steps, before.steps);

  // The timeline shows the new run, every committed event ingested.
  const TimelineModel* timeline = window.timeline()->model();
  ASSERT_TRUE(QTest::qWaitFor(
      [&] {
        return timeline->run().id == after.id && timeline->run().eventCount == after.events &&
               timeline->ingestProgress() == 1.0 && !timeline->rows().empty();
      },
      testing::kHangMs));

  // Charts: the new run, then the old one, then the new one again.
  ASSERT_TRUE(QTest::qWaitFor(
      [&] {
        return window.report() && window.report()->run.id == after.id &&
               window.report()->run.status == storage::RunStatus::kFinished;
      },
      testing::kHangMs));
  EXPECT_EQ(window.report()->steps.size(), size_t{kSteps});
  EXPECT_EQ(window.charts()->plottedValues(ChartsPanel::kLoss, "loss").size(), size_t{kSteps});
  ASSERT_TRUE(window.showRun(before.id).isOk());
  ASSERT_TRUE(QTest::qWaitFor(
      [&] { return window.report() && window.report()->run.id == before.id; }, testing::kHangMs));
  EXPECT_EQ(window.charts()->plottedValues(ChartsPanel::kBubble, "measured").size(), 2u);
  EXPECT_EQ(window.charts()->plottedValues(ChartsPanel::kLoss, "loss"),
            (std::vector<double>{5.0, 4.5}));
  ASSERT_TRUE(window.showRun(after.id).isOk());
  ASSERT_TRUE(QTest::qWaitFor(
      [&] { return window.report() && window.report()->run.id == after.id; }, testing::kHangMs));
  EXPECT_EQ(window.charts()->plottedValues(ChartsPanel::kLoss, "loss").size(), size_t{kSteps});
}

// A hostfile picked in the editor (by path, as the Hostfile… button does
// after its dialog) starts the same job as `run --hostfile`: the ranks on
// the file's hosts (here localhost, two slots), the trace on this machine.
// The run's stored layout is what `run` was given: the hostfile's hosts.
TEST(MainWindowLiveRun, AHostfilePickedInTheEditorRunsTheJobOnItsHosts) {
  const QString cli = QStringLiteral(BUBBLESCOPE_CLI_PATH);
  if (!QFileInfo(cli).isExecutable()) GTEST_SKIP() << "bubblescope-cli is not built";
  bubblescope::testing::TempDir dir;
  const std::string path = dir.file("hosts.db");
  bubblescope::testing::writePipelineRun(path);  // run 1: the file the app has open
  const QString hostfile = QString::fromStdString(dir.file("hostfile"));
  {
    QFile f(hostfile);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write("localhost slots=2\n");
  }
  auto owned = std::make_unique<ProcessRunLauncher>(cli);
  QSignalSpy finished(owned.get(), &RunLauncher::finished);
  MainWindow window(std::move(owned));
  window.setHeadless(true);
  ASSERT_TRUE(window.openFile(QString::fromStdString(path)).isOk());
  LayoutEditor* editor = window.layoutEditor();
  layout::Layout l;
  l.model.preset = "tiny";
  l.dp = 2;
  l.steps = kSteps;
  editor->setLayout(l);
  ASSERT_TRUE(editor->loadHostfile(hostfile).isOk());
  ASSERT_TRUE(editor->isValid()) << editor->problems().join("; ").toStdString();

  ModalBoxCloser boxes;
  emit editor->runRequested();
  ASSERT_TRUE(QTest::qWaitFor([&] { return finished.size() == 1; }, 180000));
  ASSERT_EQ(finished.at(0).at(0).toInt(), 0) << finished.at(0).at(1).toString().toStdString();
  ASSERT_TRUE(boxes.texts().isEmpty()) << boxes.texts().join("; ").toStdString();

  auto reader = storage::TraceReader::open(path);
  ASSERT_TRUE(reader.isOk()) << reader.status().message();
  auto runs = (*reader)->runs();
  ASSERT_TRUE(runs.isOk() && runs->size() == 2u);
  const storage::RunRecord& run = runs->back();
  EXPECT_EQ(run.status, storage::RunStatus::kFinished);
  EXPECT_EQ(run.info.worldSize, 2);
  auto stored = layout::layoutFromJson(nlohmann::json::parse(run.info.layoutJson));
  ASSERT_TRUE(stored.isOk()) << stored.status().message();
  EXPECT_EQ(stored->hosts, (std::vector<std::string>{"localhost:2"}));
  auto ranks = (*reader)->ranks(run.id);
  ASSERT_TRUE(ranks.isOk()) << ranks.status().message();
  EXPECT_EQ(ranks->size(), 2u);
}

}  // namespace
}  // namespace bubblescope::gui
