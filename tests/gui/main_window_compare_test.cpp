// The window's compare view: two runs aligned at a step, their timelines
// at full width, both loss curves in Charts, and each side fitted to its
// own step when their step times differ.
#include <gtest/gtest.h>

#include <QDockWidget>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QScrollBar>
#include <QTableView>
#include <QTest>

#include "gui/analysis_worker.h"
#include "gui/charts_panel.h"
#include "gui/compare_table_model.h"
#include "gui/compare_view.h"
#include "gui/main_window.h"
#include "gui/timeline_panel.h"
#include "tests/gui/hang_deadline.h"
#include "tests/gui/pipeline_trace.h"
#include "tests/gui/window_fixture.h"

namespace bubblescope::gui {
namespace {

using testing_window::WindowFixture;

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

// Compare's timelines take their panels' width (issue 31: they were narrow
// beside a blank strip, the hidden detail panel's column).
TEST_F(WindowFixture, CompareTimelinesHaveNoBlankStripBeside) {
  bubblescope::testing::writePipelineRun(path, 1'000'000);
  ASSERT_TRUE(window->reloadRuns().isOk());
  window->resize(1280, 650);
  window->findChild<QDockWidget*>("layoutDock")->hide();  // the room compare has then
  window->show();
  ASSERT_TRUE(window->compareRuns(1, 2, true).isOk());
  QApplication::processEvents();
  for (TimelinePanel* p : {window->compareView()->panelA(), window->compareView()->panelB()}) {
    const int right = p->view()->mapTo(p, QPoint(p->view()->width(), 0)).x();
    // The view, then its vertical scroll bar, reach the panel's right edge.
    EXPECT_GE(right + 2 * p->style()->pixelMetric(QStyle::PM_ScrollBarExtent) + 8, p->width())
        << "the view ends at " << right << " of " << p->width();
  }
  // ... and the table is no wider than its columns: no blank beside them
  // (its last column used to stretch) that the timelines could have had.
  QTableView* table = window->compareView()->tableView();
  int columns = 2 * table->frameWidth() + table->verticalScrollBar()->width() + 12;
  for (int c = 0; c < table->model()->columnCount(); ++c) columns += table->columnWidth(c);
  EXPECT_LE(table->width(), columns);
}

// At 1280 x 720 (the window 650 px high, the layout dock shown) the table's
// last column, "change B vs A", is whole in sight (issue 31 walk: it was
// half off screen behind a sideways scroll): the A and B columns, here long
// run names and global batches, narrow and wrap instead.
TEST_F(WindowFixture, CompareChangeColumnIsInSightAt1280x720) {
  bubblescope::testing::writePipelineRun(path, 1'000'000);
  ASSERT_TRUE(window->reloadRuns().isOk());
  window->resize(1280, 650);
  window->show();
  ASSERT_TRUE(window->compareRuns(1, 2, true).isOk());
  auto reports = AnalysisWorker::analyzeNow(QString::fromStdString(path), {1, 2});
  ASSERT_TRUE(reports.isOk()) << reports.status().message();
  ASSERT_EQ(reports->size(), 2u);
  (*reports)[0].run.info.name = "simulated 1f1b pp2 m4 small, the first of two";
  (*reports)[1].run.info.name = "simulated 1f1b pp4 m8 small, the second of two";
  window->compareView()->setReports((*reports)[0], (*reports)[1]);
  QApplication::processEvents();
  QTableView* table = window->compareView()->tableView();
  const int room = table->viewport()->width();
  ASSERT_GT(room, 300) << "the table is not laid out";
  const int change = CompareTableModel::kChange;
  const int right = table->columnViewportPosition(change) + table->columnWidth(change);
  EXPECT_LE(right, room) << "change B vs A ends at " << right << " of " << room << " px";
  EXPECT_GE(table->columnWidth(change),
            table->horizontalHeader()->sectionSizeHint(change) - 2)
      << "its header is cut";
  // The narrowed name cells wrap: their row is taller than one line.
  const int nameRow = 0;
  ASSERT_EQ(table->model()->index(nameRow, CompareTableModel::kA).data().toString().toStdString(),
            (*reports)[0].run.info.name);
  if (table->columnWidth(CompareTableModel::kA) <
      table->fontMetrics().horizontalAdvance(QString::fromStdString((*reports)[0].run.info.name))) {
    EXPECT_GT(table->rowHeight(nameRow), 1.5 * table->fontMetrics().height());
  }
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

}  // namespace
}  // namespace bubblescope::gui
