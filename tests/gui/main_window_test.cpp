// The window's wiring around the charts: a chart click marks ranks in the
// timeline, "run again with changes" opens compare when the new run ends,
// exports write PNG and SVG, and a clicked span is outlined (the compare
// view's own tests: main_window_compare_test.cpp).
#include "gui/main_window.h"

#include <gtest/gtest.h>

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDockWidget>
#include <QFile>
#include <QHeaderView>
#include <QImage>
#include <QLabel>
#include <QLayout>
#include <QMenu>
#include <QMenuBar>
#include <QPushButton>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QStyle>
#include <QStyleFactory>
#include <QTabWidget>
#include <QTableView>
#include <QTest>
#include <cmath>

#include "gui/charts_panel.h"
#include "gui/compare_view.h"
#include "gui/detail_panel.h"
#include "gui/help_text.h"
#include "gui/layout_editor.h"
#include "gui/palette.h"
#include "gui/planner_panel.h"
#include "gui/run_progress_widget.h"
#include "gui/runs_table_model.h"
#include "gui/timeline_panel.h"
#include "gui/widget_export.h"
#include "storage/trace_reader.h"
#include "tests/gui/contrast.h"
#include "tests/gui/hang_deadline.h"
#include "tests/gui/pipeline_trace.h"
#include "tests/gui/window_fixture.h"

// Waits are ASSERT_TRUE(QTest::qWaitFor(...)), not QTRY_*: those report to
// QTest, which gtest never hears of (a failed QTRY returned from the test,
// which then passed).
namespace bubblescope::gui {
namespace {

using testing_window::WindowFixture;


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
  ASSERT_TRUE(QTest::qWaitFor([&] { return window->report().has_value(); }, testing::kHangMs));
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
  ASSERT_TRUE(
      QTest::qWaitFor([&] { return window->compareView()->table()->rowCount() > 0; }, testing::kHangMs));
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
  // The details follow the outline: a span clicked shows, Escape or a click
  // on no span clears them (issue 31: the old span stayed).
  DetailPanel* details = window->timeline()->details();
  const QPoint onSpan(x0 + 20, y);
  QTest::mouseClick(view, Qt::LeftButton, {}, onSpan);
  ASSERT_TRUE(view->selectedSpan().has_value());
  EXPECT_TRUE(details->text().contains("backward")) << details->text().toStdString();
  QTest::keyClick(view, Qt::Key_Escape);
  EXPECT_FALSE(view->selectedSpan().has_value());
  EXPECT_FALSE(details->text().contains("backward")) << details->text().toStdString();
  QTest::mouseClick(view, Qt::LeftButton, {}, onSpan);
  ASSERT_TRUE(details->text().contains("backward"));
  const int emptyRow = window->timeline()->model()->rowOf(1, trace_model::Lane::kCompute);
  const int emptyY = at.yOf(view->rowGeometry().top[emptyRow]) + RowGeometry::kLaneHeight / 2;
  QTest::mouseClick(view, Qt::LeftButton, {}, QPoint(static_cast<int>(at.xOf(900)), emptyY));
  EXPECT_FALSE(view->selectedSpan().has_value()) << "rank 1 computes nothing at 900 ns";
  EXPECT_FALSE(details->text().contains("backward")) << details->text().toStdString();
}

// An error in the status bar goes once another run shows (issue 31: a
// stale error stayed).
TEST_F(WindowFixture, AnErrorLeavesTheStatusBarWhenAnotherRunShows) {
  bubblescope::testing::writePipelineRun(path, 1'000'000);
  ASSERT_TRUE(window->reloadRuns().isOk());
  auto statusText = [&] {
    QString text;
    for (QLabel* l : window->statusBar()->findChildren<QLabel*>()) text += l->text() + "\n";
    return text;
  };
  emit window->timeline()->errorOccurred("cannot read events: disk I/O error");
  ASSERT_TRUE(statusText().contains("disk I/O error"));
  window->runsView()->selectRow(1);
  ASSERT_EQ(window->timeline()->model()->run().id, 2);
  EXPECT_FALSE(statusText().contains("disk I/O error")) << statusText().toStdString();
  EXPECT_TRUE(statusText().contains("runs.db · 2 runs")) << statusText().toStdString();
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
  ASSERT_TRUE(QTest::qWaitFor([&] { return window.report().has_value(); }, testing::kHangMs));
  EXPECT_EQ(window.report()->steps.size(), 1u);
  ASSERT_TRUE(writer->appendEvents(step(1)).isOk());
  const std::vector<trace_model::StepRecord> more{{0, 1, 4.0, 64, 1000, 2000}};
  ASSERT_TRUE(writer->appendSteps(more).isOk());
  ASSERT_TRUE(writer->flush().isOk());
  ASSERT_TRUE(QTest::qWaitFor([&] { return window.report()->steps.size() == size_t{2}; }, testing::kHangMs))
      << window.report()->steps.size();
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

using bubblescope::testing::contrastRatio;

// The toolbar's Run and Stop icons stand out on both palettes (issue 31:
// on the dark one they were nearly invisible): the mean colour of each
// icon's opaque pixels keeps WCAG's 3:1 for graphics against the window.
TEST(MainWindowPalette, RunAndStopIconsStandOutOnBothPalettes) {
  const QPalette savedPalette = QApplication::palette();
  const QString savedStyle = QApplication::style()->name();
  for (bool dark : {false, true}) {
    applyPalette(dark);
    MainWindow window;
    const QColor background = QApplication::palette().color(QPalette::Window);
    for (const char* text : {"&Run layout", "&Stop run"}) {
      QAction* action = nullptr;
      for (QAction* a : window.findChildren<QAction*>()) {
        if (a->text() == text) action = a;
      }
      ASSERT_NE(action, nullptr) << text;
      const QImage icon = action->icon().pixmap(24, 24).toImage();
      double r = 0, g = 0, b = 0;
      int n = 0;
      for (int y = 0; y < icon.height(); ++y) {
        for (int x = 0; x < icon.width(); ++x) {
          const QColor c = icon.pixelColor(x, y);
          if (c.alpha() < 200) continue;
          r += c.redF(), g += c.greenF(), b += c.blueF(), ++n;
        }
      }
      ASSERT_GT(n, 20) << text << ": an icon with hardly a pixel";
      const QColor mean = QColor::fromRgbF(static_cast<float>(r / n), static_cast<float>(g / n),
                                           static_cast<float>(b / n));
      EXPECT_GE(contrastRatio(mean, background), 3.0)
          << text << (dark ? " on the dark palette: " : " on the light palette: ")
          << mean.name().toStdString() << " on " << background.name().toStdString();
    }
  }
  QApplication::setStyle(QStyleFactory::create(savedStyle));
  QApplication::setPalette(savedPalette);
}

// Begins a run with nothing in it yet (as `run` has when it names its run),
// fills it with two steps of layer spans and finishes it when told.
class LiveLauncher : public RunLauncher {
 public:
  explicit LiveLauncher(std::string path) : path_(std::move(path)) {}
  Status start(const RunRequest&) override {
    running_ = true;
    writer_ = testing::writeGuiTrace(path_, {testing::guiRank(0, 0), testing::guiRank(1, 1)}, {},
                                     {}, testing::kPipelineLayout);
    BS_ASSIGN_OR_RETURN(auto reader, storage::TraceReader::open(path_));
    BS_ASSIGN_OR_RETURN(auto runs, reader->runs());
    emit runBegun(runs.back().id);
    return Status::ok();
  }
  void stop() override {}
  bool isRunning() const override { return running_; }
  // Two steps of rank 0's layer h.0 and rank 1's h.1, then the run's end.
  void fillAndFinishRun() {
    using trace_model::EventKind;
    using trace_model::Lane;
    std::vector<trace_model::Event> events;
    std::vector<trace_model::StepRecord> steps;
    for (int step = 0; step < 2; ++step) {
      const int64_t t = step * 1000;
      for (int rank = 0; rank < 2; ++rank) {
        for (EventKind kind : {EventKind::kForward, EventKind::kBackward}) {
          const int64_t start = t + (kind == EventKind::kForward ? 0 : 400) + rank * 100;
          trace_model::Event e =
              testing::guiSpan(rank, Lane::kCompute, kind, start, start + 200, step, 0);
          e.name = "h." + std::to_string(rank);
          events.push_back(e);
        }
        steps.push_back({rank, step, 5.0 - step, 64, t, t + 1000});
      }
    }
    ASSERT_TRUE(writer_->appendEvents(events).isOk());
    ASSERT_TRUE(writer_->appendSteps(steps).isOk());
    ASSERT_TRUE(writer_->finishRun(storage::RunStatus::kFinished).isOk());
  }
  void finish() {
    running_ = false;
    emit finished(0, {});
  }

 private:
  std::string path_;
  std::unique_ptr<storage::TraceWriter> writer_;
  bool running_ = false;
};

// The planner's "measured from the shown run" after Run (issue 31: it said
// "Cannot measure run 5 ... (was it traced?)" about a traced, finished run,
// and kept the FLOPs estimate): while the run runs it waits, saying so, and
// when the run ends it measures it.
TEST(MainWindowPlanner, MeasuresTheStartedRunWhenItEnds) {
  bubblescope::testing::TempDir dir;
  const std::string path = dir.file("runs.db");
  bubblescope::testing::writePipelineRun(path);
  auto owned = std::make_unique<LiveLauncher>(path);
  LiveLauncher* launcher = owned.get();
  MainWindow window(std::move(owned));
  window.setHeadless(true);
  ASSERT_TRUE(window.openFile(QString::fromStdString(path)).isOk());
  PlannerPanel* planner = window.planner();
  auto* source = planner->findChild<QComboBox*>("calibration");
  ASSERT_NE(source, nullptr);
  source->setCurrentIndex(source->findData(PlannerPanel::kShownRunSource));
  ASSERT_GE(source->currentIndex(), 0);

  emit window.layoutEditor()->runRequested();
  ASSERT_EQ(window.timeline()->model()->run().id, 2) << "the started run is shown";
  ASSERT_TRUE(QTest::qWaitFor(
      [&] { return planner->statusText().contains("Run 2 is still running"); }, 5000));
  EXPECT_FALSE(planner->calibration().has_value());

  launcher->fillAndFinishRun();
  ASSERT_TRUE(QTest::qWaitFor([&] { return planner->calibration().has_value(); }, testing::kHangMs));
  EXPECT_EQ(planner->calibration()->sourceRun, 2);
  EXPECT_EQ(planner->calibrationSource(), "measured from run 2");
  ASSERT_TRUE(QTest::qWaitFor(
      [&] { return planner->statusText().contains("costs: measured from run 2"); }, 5000));
  EXPECT_FALSE(planner->statusText().contains("Cannot measure"))
      << planner->statusText().toStdString();
  launcher->finish();
}

// Opening another file shows that file's runs only (issue 31: the old
// file's rows stayed, "k.db · 6 runs", and a stale row gave "run 4 is not
// in k.db"): the list, the status bar and the shown run are the new file's,
// compare lets go of the old one, and Reload keeps it so.
TEST_F(WindowFixture, OpeningAnotherFileShowsOnlyItsRuns) {
  window->setHeadless(true);  // an error would be a modal box otherwise
  for (int i = 1; i < 6; ++i) bubblescope::testing::writePipelineRun(path, i * 10'000);
  ASSERT_TRUE(window->openFile(QString::fromStdString(path)).isOk());
  ASSERT_EQ(window->runsModel()->rowCount(), 6);
  ASSERT_TRUE(window->compareRuns(1, 2, true).isOk());
  ASSERT_TRUE(window->runAgainWithChanges().isOk());

  const std::string other = dir.file("other.db");
  bubblescope::testing::writePipelineRun(other);
  ASSERT_TRUE(window->openFile(QString::fromStdString(other)).isOk());
  auto statusText = [&] {
    QString text;
    for (QLabel* l : window->statusBar()->findChildren<QLabel*>()) text += l->text() + "\n";
    return text;
  };
  EXPECT_EQ(window->runsModel()->rowCount(), 1);
  EXPECT_EQ(window->timeline()->model()->run().id, 1);
  EXPECT_TRUE(statusText().contains("other.db · 1 run\n")) << statusText().toStdString();
  EXPECT_EQ(window->compareView()->runA(), 0) << "compare held the old file's runs";
  EXPECT_EQ(window->baselineRunId(), 0) << "the old file's run is no baseline here";

  bubblescope::testing::writePipelineRun(other, 10'000);
  QAction* reload = nullptr;
  for (QAction* a : window->findChildren<QAction*>()) {
    if (a->text() == "Re&load runs") reload = a;
  }
  ASSERT_NE(reload, nullptr);
  reload->trigger();
  EXPECT_EQ(window->runsModel()->rowCount(), 2);
  window->runsView()->selectRow(1);
  EXPECT_EQ(window->timeline()->model()->run().id, 2);
  EXPECT_FALSE(statusText().contains("is not in")) << statusText().toStdString();
}

// A run whose layout text is long (an imported run's says how it was
// imported) leaves the status and numbers in sight: the layout column is cut
// and its tooltip holds the whole text (issue 31: the right-hand columns were
// off screen).
TEST_F(WindowFixture, ALongLayoutLeavesTheRunsNumbersInSight) {
  const std::string longText =
      R"({"imported":"kineto traces: 1 file of world 2; parallel dimensions unknown (name )"
      R"(process groups: import --group NAME=dp|tp|pp|ep) and a little more to say"})";
  bubblescope::testing::writePipelineRun(path, 1'000'000, longText);
  window->resize(1280, 650);
  window->show();
  ASSERT_TRUE(window->openFile(QString::fromStdString(path)).isOk());
  QApplication::processEvents();
  QTableView* runs = window->runsView();
  const QModelIndex layoutCell = runs->model()->index(1, RunsTableModel::kLayout);
  ASSERT_EQ(runs->model()->data(layoutCell).toString().toStdString(), longText);
  EXPECT_EQ(runs->model()->data(layoutCell, Qt::ToolTipRole).toString().toStdString(), longText);
  for (int column : {RunsTableModel::kStatus, RunsTableModel::kStepTime, RunsTableModel::kRanks}) {
    const QRect cell = runs->visualRect(runs->model()->index(1, column));
    EXPECT_TRUE(runs->viewport()->rect().contains(cell))
        << "column " << column << " is out of sight at x " << cell.x();
  }
  // A narrower window scrolls the columns: the scroll bar hides no row.
  window->resize(900, 650);
  QApplication::processEvents();
  ASSERT_TRUE(runs->horizontalScrollBar()->isVisible());
  const QRect last = runs->visualRect(runs->model()->index(1, RunsTableModel::kRun));
  EXPECT_LE(last.bottom(), runs->viewport()->rect().bottom()) << "the last run is half hidden";
}

// A 1280 x 720 screen holds the window (issue 31: its minimum was about
// 1309 x 952, 1042 with the Run output dock, 1057 with an editor problem):
// the minimum fits with the dock open and a problem under an editor field,
// whatever tab is shown, and the problem does not raise it (at 1920 x 1080
// a maximized window stayed maximized only while nothing grew it).
TEST_F(WindowFixture, TheWindowFitsA1280x720Screen) {
  // The desktop's panel and the window's title bar take about 70 of the 720.
  const QSize screen(1280, 720 - 70);
  window->show();
  auto minimum = [&] {
    QApplication::processEvents();
    return window->minimumSizeHint().expandedTo(window->layout()->totalMinimumSize());
  };
  window->findChild<QDockWidget*>("outputDock")->show();
  const QSize withDock = minimum();
  LayoutEditor* editor = window->layoutEditor();
  editor->findChild<QSpinBox*>("pp")->setValue(4);  // tiny has 2 layers
  ASSERT_FALSE(editor->problemFor("pp").isEmpty());
  const QSize withProblem = minimum();
  EXPECT_EQ(withProblem.height(), withDock.height()) << "the problem grew the window";
  for (int tab = 0; tab < window->tabs()->count(); ++tab) {
    window->tabs()->setCurrentIndex(tab);
    const QSize m = minimum();
    EXPECT_LE(m.width(), screen.width()) << "tab " << tab;
    EXPECT_LE(m.height(), screen.height()) << "tab " << tab;
  }
  window->resize(screen);
  QApplication::processEvents();
  ASSERT_EQ(window->size(), screen);
  auto inWindow = [&](QWidget* w) {
    const QRect r(w->mapTo(window.get(), QPoint(0, 0)), w->size());
    return w->isVisible() && window->rect().contains(r);
  };
  EXPECT_TRUE(inWindow(editor->findChild<QPushButton*>("run"))) << "the Run button is in sight";
  EXPECT_TRUE(inWindow(window->statusBar()));
  EXPECT_TRUE(inWindow(window->runsView()));
}

TEST_F(WindowFixture, TheStartedRunIsTheOneRunNamed) {
  emit window->layoutEditor()->runRequested();
  ASSERT_EQ(launcher->requests.size(), 1u);
  ASSERT_TRUE(
      QTest::qWaitFor([&] { return window->timeline()->model()->run().id == int64_t{2}; }, testing::kHangMs))
      << window->timeline()->model()->run().id;
  launcher->finish(0);
  EXPECT_EQ(window->timeline()->model()->run().id, 2);
}

}  // namespace
}  // namespace bubblescope::gui
