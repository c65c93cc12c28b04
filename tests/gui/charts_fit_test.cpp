// The Charts tab on a 1280 x 720 screen: every chart, its legend included,
// is in sight without scrolling, with the layout dock open and with a
// comparison's loss curves (issue 31 walk: the bottom row's legends, the loss
// chart's among them, were cut by the tab's lower edge).
#include <gtest/gtest.h>
#include <qcustomplot.h>

#include <QApplication>
#include <QScrollArea>
#include <QTabWidget>

#include "gui/charts_panel.h"
#include "gui/main_window.h"
#include "tests/gui/window_fixture.h"

namespace bubblescope::gui {
namespace {

using testing_window::WindowFixture;

// Each chart's whole widget rectangle, in the scroll area's viewport.
void expectEveryChartInSight(MainWindow& window, const char* what) {
  auto* scroll = window.findChild<QScrollArea*>("chartsScroll");
  ASSERT_NE(scroll, nullptr);
  QWidget* viewport = scroll->viewport();
  for (int c = 0; c < ChartsPanel::kChartCount; ++c) {
    QCustomPlot* plot = window.charts()->plot(ChartsPanel::Chart(c));
    const QRect r(plot->mapTo(viewport, QPoint(0, 0)), plot->size());
    EXPECT_TRUE(viewport->rect().contains(r))
        << what << ": " << ChartsPanel::chartName(ChartsPanel::Chart(c)).toStdString() << " at "
        << r.x() << "," << r.y() << " " << r.width() << "x" << r.height() << " in "
        << viewport->width() << "x" << viewport->height();
    // The legend, inside the plot, under its axes: wholly inside the plot.
    const QRect legend = plot->legend->outerRect();
    EXPECT_TRUE(plot->rect().contains(legend))
        << what << ": " << ChartsPanel::chartName(ChartsPanel::Chart(c)).toStdString()
        << "'s legend at " << legend.y() << "+" << legend.height() << " of " << plot->height();
  }
}

TEST_F(WindowFixture, EveryChartIsInSightOnA1280x720Screen) {
  window->resize(1280, 720 - 70);  // less the desktop's panel and the title bar
  window->show();
  ASSERT_TRUE(window->analyzeShownRun(true).isOk());
  window->tabs()->setCurrentIndex(MainWindow::kChartsTab);
  QApplication::processEvents();
  expectEveryChartInSight(*window, "the shown run");
  // A comparison: the loss chart's legend holds one line per run.
  const analysis::RunReport report = *window->report();
  analysis::RunReport other = report;
  other.run.id = 2;
  window->charts()->setComparedRuns({report, other});
  QApplication::processEvents();
  expectEveryChartInSight(*window, "two compared runs");
}

}  // namespace
}  // namespace bubblescope::gui
