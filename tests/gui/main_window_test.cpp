// The window's wiring around the charts: a chart click marks ranks in the
// timeline, compare aligns two runs and fills its table, "run again with
// changes" opens compare when the new run ends, exports write PNG and SVG,
// and a clicked span is outlined.
#include "gui/main_window.h"

#include <gtest/gtest.h>

#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QFile>
#include <QHeaderView>
#include <QImage>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTest>

#include "gui/charts_panel.h"
#include "gui/compare_view.h"
#include "gui/help_text.h"
#include "gui/layout_editor.h"
#include "gui/run_progress_widget.h"
#include "gui/timeline_panel.h"
#include "gui/widget_export.h"
#include "storage/trace_reader.h"
#include "tests/gui/hang_deadline.h"
#include "tests/gui/pipeline_trace.h"

namespace bubblescope::gui {
namespace {

// Appends a run to the trace when started; finishes when the test says.
class AppendingLauncher : public RunLauncher {
 public:
  explicit AppendingLauncher(std::string path) : path_(std::move(path)) {}
  Status start(const RunRequest& request) override {
    requests.push_back(request);
    running_ = true;
    bubblescope::testing::writePipelineRun(path_, 5000);
    auto reader = storage::TraceReader::open(path_);
    auto runs = reader.isOk() ? (*reader)->runs()
                              : Result<std::vector<storage::RunRecord>>(reader.status());
    if (runs.isOk() && !runs->empty()) emit runBegun(runs->back().id);  // as `run` says run_id
    emit outputLine("step 1/2 | loss 5.0000 | 100 tok/s");
    return Status::ok();
  }
  void stop() override { stopAsked = true; }
  bool isRunning() const override { return running_; }
  void finish(int code) {
    running_ = false;
    emit finished(code, code == 0 ? QString() : QStringLiteral("error: rank 1 failed"));
  }
  std::vector<RunRequest> requests;
  bool stopAsked = false;

 private:
  std::string path_;
  bool running_ = false;
};

struct WindowFixture : ::testing::Test {
  bubblescope::testing::TempDir dir;
  std::string path = dir.file("runs.db");
  AppendingLauncher* launcher = nullptr;
  std::unique_ptr<MainWindow> window;

  void SetUp() override {
    bubblescope::testing::writePipelineRun(path);
    auto l = std::make_unique<AppendingLauncher>(path);
    launcher = l.get();
    window = std::make_unique<MainWindow>(std::move(l));
    window->resize(1400, 900);
    ASSERT_TRUE(window->openFile(QString::fromStdString(path)).isOk());
  }
};

TEST_F(WindowFixture, ChartClicksMarkRanksInTheTimeline) {
  ASSERT_TRUE(window->analyzeShownRun(true).isOk());
  ASSERT_TRUE(window->report().has_value());
  window->tabs()->setCurrentIndex(MainWindow::kChartsTab);
  emit window->charts()->stageClicked(1);
  EXPECT_EQ(window->timeline()->view()->markedRanks(), (std::vector<int32_t>{1}));
  EXPECT_EQ(window->tabs()->currentIndex(), MainWindow::kTimelineTab);
  emit window->charts()->rankClicked(0);
  EXPECT_EQ(window->timeline()->view()->markedRanks(), (std::vector<int32_t>{0}));
}

TEST_F(WindowFixture, AnalysisOfTheShownRunArrivesFromTheWorker) {
  // openFile showed run 1 and started its analysis on a worker thread.
  QTRY_VERIFY_WITH_TIMEOUT(window->report().has_value(), testing::kHangMs);
  EXPECT_EQ(window->report()->run.id, 1);
  EXPECT_EQ(window->charts()->plottedValues(ChartsPanel::kBubble, "measured").size(), 2u);
}

TEST_F(WindowFixture, RunAgainWithChangesOpensCompareWhenTheNewRunEnds) {
  ASSERT_TRUE(window->runAgainWithChanges().isOk());
  EXPECT_EQ(window->baselineRunId(), 1);
  EXPECT_EQ(window->layoutEditor()->layout().pp, 2) << "the run's layout is loaded";
  ASSERT_TRUE(window->layoutEditor()->isValid())
      << window->layoutEditor()->problems().join("; ").toStdString();
  emit window->layoutEditor()->runRequested();
  ASSERT_EQ(launcher->requests.size(), 1u);
  EXPECT_EQ(window->runProgress()->last()->step, 1);
  launcher->finish(0);
  EXPECT_EQ(window->tabs()->currentIndex(), MainWindow::kCompareTab);
  EXPECT_EQ(window->compareView()->runA(), 1);
  EXPECT_EQ(window->compareView()->runB(), 2);
  QTRY_VERIFY_WITH_TIMEOUT(window->compareView()->table()->rowCount() > 0, testing::kHangMs);
  EXPECT_EQ(window->baselineRunId(), 0);
}

TEST_F(WindowFixture, TheLayoutEditorFollowsTheShownRun) {
  // Run 1 is gpipe pp 2 m 2 (shown on open); run 2 is 1f1b pp 2 m 4.
  const std::string other =
      R"({"dp":1,"tp":1,"pp":2,"schedule":"1f1b","micro_batches":4,"micro_batch_size":1,)"
      R"("steps":2,"model":{"preset":"tiny"}})";
  bubblescope::testing::writePipelineRun(path, 1'000'000, other);
  ASSERT_TRUE(window->reloadRuns().isOk());
  LayoutEditor* editor = window->layoutEditor();
  EXPECT_EQ(editor->layout().pp, 2);
  EXPECT_EQ(editor->layout().schedule, layout::ScheduleKind::kGPipe);
  EXPECT_EQ(editor->layout().microBatches, 2);

  window->runsView()->selectRow(1);  // the user clicks run 2
  ASSERT_EQ(window->timeline()->model()->run().id, 2);
  EXPECT_EQ(editor->layout().schedule, layout::ScheduleKind::kOneFOneB);
  EXPECT_EQ(editor->layout().microBatches, 4);

  // Editing starts from the shown run: the run started is run 2's layout
  // with the one change.
  editor->findChild<QSpinBox*>("micro_batches")->setValue(8);
  emit editor->runRequested();
  ASSERT_EQ(launcher->requests.size(), 1u);
  auto launched = layout::layoutFromFile(launcher->requests[0].layoutPath.toStdString());
  ASSERT_TRUE(launched.isOk()) << launched.status().message();
  EXPECT_EQ(launched->microBatches, 8);
  EXPECT_EQ(launched->schedule, layout::ScheduleKind::kOneFOneB);
  EXPECT_EQ(launched->pp, 2);

  ASSERT_TRUE(window->showRun(1).isOk());
  EXPECT_EQ(editor->layout().schedule, layout::ScheduleKind::kGPipe);
  launcher->finish(0);
}

// The runs list shows several rows, and the shown run is scrolled into
// sight (the last one, on open, of a file with many runs).
TEST_F(WindowFixture, RunsListIsTallAndShowsTheShownRun) {
  for (int i = 1; i < 20; ++i) bubblescope::testing::writePipelineRun(path, i * 10'000);
  ASSERT_TRUE(window->openFile(QString::fromStdString(path)).isOk());
  window->show();
  QApplication::processEvents();
  QTableView* runs = window->runsView();
  const int rowHeight = runs->verticalHeader()->defaultSectionSize();
  EXPECT_GE(runs->viewport()->height(), 6 * rowHeight) << "taller than 6 rows";
  ASSERT_EQ(window->timeline()->model()->run().id, 20);
  auto inSight = [&](int row) {
    return runs->viewport()->rect().contains(runs->visualRect(runs->model()->index(row, 0)));
  };
  EXPECT_TRUE(inSight(19)) << "the last run, shown on open, is scrolled into sight";
  ASSERT_TRUE(window->showRun(1).isOk());
  QApplication::processEvents();
  EXPECT_TRUE(inSight(0));
  EXPECT_FALSE(inSight(19));
}

// The status bar counts the file's runs, singular or plural.
TEST_F(WindowFixture, StatusBarCountsRunsInTheRightNumber) {
  auto statusText = [&] {
    QString text;
    for (QLabel* l : window->statusBar()->findChildren<QLabel*>()) text += l->text() + "\n";
    return text;
  };
  EXPECT_TRUE(statusText().contains(" · 1 run\n")) << statusText().toStdString();
  bubblescope::testing::writePipelineRun(path, 1'000'000);
  ASSERT_TRUE(window->openFile(QString::fromStdString(path)).isOk());
  EXPECT_TRUE(statusText().contains(" · 2 runs\n")) << statusText().toStdString();
}

// A closed dock comes back from the View menu.
TEST_F(WindowFixture, ClosedDocksComeBackFromTheViewMenu) {
  window->show();
  for (const char* name : {"layoutDock", "outputDock"}) {
    auto* dock = window->findChild<QDockWidget*>(name);
    ASSERT_NE(dock, nullptr) << name;
    dock->close();
    ASSERT_TRUE(dock->isHidden());
    QAction* entry = nullptr;
    for (QMenu* menu : window->menuBar()->findChildren<QMenu*>()) {
      if (menu->title() != "&View") continue;
      for (QAction* a : menu->actions()) {
        if (a == dock->toggleViewAction()) entry = a;
      }
    }
    ASSERT_NE(entry, nullptr) << "no View menu entry for " << name;
    EXPECT_EQ(entry->text(), dock->windowTitle());
    EXPECT_FALSE(entry->isChecked());
    entry->trigger();
    EXPECT_FALSE(dock->isHidden()) << name << " did not come back";
  }
}

TEST_F(WindowFixture, CompareAlignsBothTimelinesAtAStep) {
  bubblescope::testing::writePipelineRun(path, 1'000'000);
  ASSERT_TRUE(window->reloadRuns().isOk());
  ASSERT_TRUE(window->compareRuns(1, 2, true).isOk());
  CompareView* c = window->compareView();
  EXPECT_GT(c->table()->rowCount(), 3);
  ASSERT_TRUE(c->alignAtStep(1));
  TimelineView* a = c->panelA()->view();
  TimelineView* b = c->panelB()->view();
  EXPECT_NEAR(a->viewEndNs() - a->viewStartNs(), b->viewEndNs() - b->viewStartNs(), 1e-6);
  EXPECT_NEAR(a->viewStartNs(), 1000 - 20, 1e-6) << "step 1 of run A starts at 1000 ns";
  EXPECT_NEAR(b->viewStartNs(), 1'001'000 - 20, 1e-6);
  EXPECT_FALSE(c->alignAtStep(7));
}

// Opening a comparison puts both runs' loss curves on Charts' loss plot,
// each labelled by its run and layout (the second compresses its gradients).
TEST_F(WindowFixture, CompareDrawsBothRunsLossCurvesInCharts) {
  bubblescope::testing::writePipelineRun(
      path, 1'000'000,
      R"({"dp":1,"tp":1,"pp":2,"schedule":"gpipe","micro_batches":2,"micro_batch_size":1,)"
      R"("steps":2,"grad_compression":"int8","model":{"preset":"tiny"}})");
  ASSERT_TRUE(window->reloadRuns().isOk());
  ASSERT_TRUE(window->analyzeShownRun(true).isOk());
  ASSERT_TRUE(window->compareRuns(1, 2, true).isOk());
  const ChartData& loss = window->charts()->data(ChartsPanel::kLoss);
  ASSERT_EQ(loss.series.size(), 2u);
  EXPECT_TRUE(loss.series[0].name.startsWith("run 1 · dp1 tp1 pp2 · gpipe m2"))
      << loss.series[0].name.toStdString();
  EXPECT_TRUE(loss.series[1].name.startsWith("run 2 · "));
  EXPECT_TRUE(loss.series[1].name.contains("int8")) << loss.series[1].name.toStdString();
  EXPECT_EQ(window->charts()->plottedValues(ChartsPanel::kLoss, loss.series[1].name),
            (std::vector<double>{5.0, 4.5}));
  EXPECT_TRUE(window->charts()->detailsText().contains("<b>Run 2</b> int8: "))
      << window->charts()->detailsText().toStdString();
}

// A run 3x slower opens with each side fitting its own step (the faster
// run is not squashed to a third of its timeline); "same time scale" shows
// both over the longer step. The table's columns are not cut off.
TEST_F(WindowFixture, CompareFitsEachSideWhenStepTimesDifferByMoreThanTwice) {
  bubblescope::testing::writePipelineRun(path, 1'000'000, bubblescope::testing::kPipelineLayout, 3);
  ASSERT_TRUE(window->reloadRuns().isOk());
  window->resize(1600, 900);
  window->show();
  ASSERT_TRUE(window->compareRuns(1, 2, true).isOk());
  QApplication::processEvents();
  CompareView* c = window->compareView();
  EXPECT_EQ(c->scale(), CompareView::Scale::kFitEach);
  TimelineView* a = c->panelA()->view();
  TimelineView* b = c->panelB()->view();
  // Step 1: 1000 ns in run 1, 3000 ns in run 2, each with 2% padding.
  EXPECT_NEAR(a->viewEndNs() - a->viewStartNs(), 1000 * 1.04, 1e-6);
  EXPECT_NEAR(b->viewEndNs() - b->viewStartNs(), 3000 * 1.04, 1e-6);
  EXPECT_NEAR(b->viewStartNs(), 1'003'000 - 60, 1e-6) << "step 1 of run B starts at 1 003 000";

  c->setScale(CompareView::Scale::kSameScale);
  EXPECT_NEAR(a->viewEndNs() - a->viewStartNs(), 3000 * 1.04, 1e-6);
  EXPECT_NEAR(b->viewEndNs() - b->viewStartNs(), 3000 * 1.04, 1e-6);

  QTableView* table = c->tableView();
  ASSERT_GT(table->model()->rowCount(), 3);
  EXPECT_EQ(table->horizontalScrollBar()->maximum(), 0) << "the table is wider than its view";
  const int last = CompareTableModel::kChange;
  const QAbstractItemView* view = table;  // sizeHintForColumn is public here
  EXPECT_GE(table->columnWidth(last), view->sizeHintForColumn(last))
      << "the change column is cut off";
}

TEST_F(WindowFixture, TimelineExportsToPngAndSvg) {
#if !BUBBLESCOPE_WITH_SVG
  GTEST_SKIP() << "built without Qt SVG";
#endif
  window->show();
  const QString png = QString::fromStdString(dir.file("t.png"));
  const QString svg = QString::fromStdString(dir.file("t.svg"));
  ASSERT_TRUE(exportWidget(window->timeline()->view(), png).isOk());
  ASSERT_TRUE(exportWidget(window->timeline()->view(), svg).isOk());
  EXPECT_FALSE(QImage(png).isNull());
  QFile f(svg);
  ASSERT_TRUE(f.open(QIODevice::ReadOnly));
  const QByteArray text = f.readAll();
  EXPECT_TRUE(text.contains("<svg"));
  EXPECT_TRUE(text.contains("rank 1")) << "labels stay text";
}

TEST_F(WindowFixture, AClickedSpanIsOutlined) {
  TimelineView* view = window->timeline()->view();
  view->resize(TimelinePlacement::kLabelWidth + 1000, 200);
  view->setFollowing(false);
  view->setViewRange(0, 1000);
  auto renderView = [&] {
    QImage image(view->size(), QImage::Format_ARGB32);
    view->render(&image);
    return image;
  };
  const QImage before = renderView();
  trace_model::Event e = testing::guiSpan(0, trace_model::Lane::kCompute,
                                          trace_model::EventKind::kBackward, 600, 1000, 0, 0);
  view->setSelectedSpan(e);
  const QImage after = renderView();
  const TimelinePlacement at = view->placement();
  const int row = window->timeline()->model()->rowOf(0, trace_model::Lane::kCompute);
  const int y = at.yOf(view->rowGeometry().top[row]) + RowGeometry::kLaneHeight / 2;
  const int x0 = static_cast<int>(at.xOf(600));
  const QColor text = view->palette().color(QPalette::WindowText);
  bool outlined = false;
  for (int x = x0 - 4; x <= x0; ++x)
    outlined = outlined || after.pixelColor(x, y).rgb() == text.rgb();
  EXPECT_TRUE(outlined) << "an outline left of the span's start";
  EXPECT_NE(before, after);
  QTest::keyClick(view, Qt::Key_Escape);
  EXPECT_FALSE(view->selectedSpan().has_value());
}

// Every menu shortcut is listed on the help page (Ctrl+2 and Ctrl+3 as
// "Ctrl+1 … Ctrl+4"), and the page explains the concepts.
TEST_F(WindowFixture, HelpListsEveryShortcut) {
  const QString help = helpHtml();
  for (const char* idea : {"Bubble", "Overlap", "(p−1)/(m+p−1)", "(p−1)/(v·m+p−1)", "ZB-H1",
                           "exposed communication", "ZeRO"}) {
    EXPECT_TRUE(help.contains(QString::fromUtf8(idea))) << idea;
  }
  int checked = 0;
  for (QAction* action : window->findChildren<QAction*>()) {
    for (const QKeySequence& key : action->shortcuts()) {
      const QString text = key.toString(QKeySequence::PortableText);
      if (text == "Ctrl+2" || text == "Ctrl+3") continue;
      EXPECT_TRUE(help.contains(text)) << text.toStdString() << " (" << action->text().toStdString()
                                       << ") is not on the help page";
      ++checked;
    }
  }
  EXPECT_GT(checked, 12);
}

// A run still being written: the charts' analysis is redone as it grows.
TEST(MainWindowLive, ChartsFollowARunningRun) {
  using trace_model::EventKind;
  using trace_model::Lane;
  bubblescope::testing::TempDir dir;
  const std::string path = dir.file("live.db");
  auto step = [](int s) {
    const int64_t t = s * 1000;
    return std::vector<trace_model::Event>{
        testing::guiSpan(0, Lane::kCompute, EventKind::kForward, t, t + 600, s, 0)};
  };
  auto writer =
      testing::writeGuiTrace(path, {testing::guiRank(0, 0)}, step(0), {{0, 0, 5.0, 64, 0, 1000}});
  MainWindow window;
  ASSERT_TRUE(window.openFile(QString::fromStdString(path)).isOk());
  QTRY_VERIFY_WITH_TIMEOUT(window.report().has_value(), testing::kHangMs);
  EXPECT_EQ(window.report()->steps.size(), 1u);
  ASSERT_TRUE(writer->appendEvents(step(1)).isOk());
  const std::vector<trace_model::StepRecord> more{{0, 1, 4.0, 64, 1000, 2000}};
  ASSERT_TRUE(writer->appendSteps(more).isOk());
  ASSERT_TRUE(writer->flush().isOk());
  QTRY_COMPARE_WITH_TIMEOUT(window.report()->steps.size(), size_t{2}, testing::kHangMs);
  EXPECT_EQ(window.charts()->plottedValues(ChartsPanel::kLoss, "loss"),
            (std::vector<double>{5.0, 4.0}));
  ASSERT_TRUE(writer->finishRun(storage::RunStatus::kFinished).isOk());
}

// Stop: the launcher is asked to stop, and the run's end (run exits 143
// after marking the run stopped) is a stop, not a failure: no modal box
// (it would block this test), and the strip says so.
TEST_F(WindowFixture, StopEndsTheRunAsStoppedWithoutADialog) {
  emit window->layoutEditor()->runRequested();
  ASSERT_EQ(launcher->requests.size(), 1u);
  emit window->runProgress()->stopRequested();
  EXPECT_TRUE(launcher->stopAsked);
  launcher->finish(143);
  EXPECT_TRUE(window->runProgress()->text().startsWith("run stopped"))
      << window->runProgress()->text().toStdString();
}

TEST_F(WindowFixture, TheStartedRunIsTheOneRunNamed) {
  emit window->layoutEditor()->runRequested();
  ASSERT_EQ(launcher->requests.size(), 1u);
  QTRY_COMPARE_WITH_TIMEOUT(window->timeline()->model()->run().id, int64_t{2}, testing::kHangMs);
  launcher->finish(0);
  EXPECT_EQ(window->timeline()->model()->run().id, 2);
}

}  // namespace
}  // namespace bubblescope::gui
