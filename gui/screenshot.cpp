#include "gui/screenshot.h"

#include <QApplication>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QPixmap>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <iostream>

#include "gui/charts_panel.h"
#include "gui/compare_view.h"
#include "gui/layout_editor.h"
#include "gui/kernels_table_view.h"
#include "gui/main_window.h"
#include "gui/cluster_planner_panel.h"
#include "gui/planner_panel.h"
#include "gui/prediction_label.h"
#include "gui/teaching_lab.h"
#include "gui/timeline_export.h"
#include "gui/timeline_panel.h"
#include "gui/timeline_replay.h"

namespace bubblescope::gui {

int saveScreenshot(MainWindow& window, const ScreenshotOptions& o) {
  window.resize(o.width, o.height);
  window.show();
  QApplication::processEvents();
  TimelinePanel* panel = window.timeline();
  if (o.idealReplay) {
    if (Status s = window.idealReplay()->setReplayShown(true); !s.isOk()) {
      std::cerr << "bubblescope: ideal-hardware replay: " << s.message() << "\n";
      return 1;
    }
  }
  const Status indexed =
      o.indexedEvents >= 0 ? panel->ingestOnly(o.indexedEvents) : panel->ingestAll();
  if (Status s = indexed; !s.isOk()) {
    std::cerr << "bubblescope: " << s.message() << "\n";
    return 1;
  }
  TimelineView* view = panel->view();
  view->fitAll();
  const bool wantsCharts = o.what == "charts" || o.what == "metrics" || o.what == "kernels" ||
                           o.what == "kernel-timeline" || o.what.startsWith("chart:");
  if (wantsCharts || o.what == "window") {
    if (Status s = window.analyzeShownRun(true); !s.isOk()) {
      std::cerr << "bubblescope: analysis: " << s.message() << "\n";
      if (wantsCharts) return 1;
    }
  }
  if (o.step >= 0) {
    for (const trace_model::StepWindow& w : panel->model()->steps()) {
      if (w.step != o.step) continue;
      const double pad = (w.endNs - w.startNs) * 0.02;
      view->setFollowing(false);
      view->setViewRange(w.startNs - pad, w.endNs + pad);
    }
  }
  if (o.zoom > 1.0) {
    view->setFollowing(false);
    view->zoomBy(1.0 / o.zoom, view->placement().plot.center().x());
  }
  QApplication::processEvents();
  if (o.selectFirstSpan) {
    // The first compute span in view on the first row: what a click shows.
    const double mid = (view->viewStartNs() + view->viewEndNs()) / 2;
    (void)panel->model()->frame(view->viewStartNs(), view->viewEndNs(),
                                view->placement().plot.width(), 0, 0);
    if (auto e = panel->model()->eventAt(0, mid, (view->viewEndNs() - view->viewStartNs()) / 4)) {
      panel->details()->showSpan(*e, panel->model()->startNs());
      view->setSelectedSpan(*e);
      const double len = view->viewEndNs() - view->viewStartNs();
      view->setSelection(std::make_pair(mid - len * 0.1, mid + len * 0.05));
    }
  }
  if (o.markRank >= 0) view->markRanks({o.markRank});
  if (o.compareA > 0 && o.compareB > 0) {
    // Room for two timelines and the table: the layout dock closes.
    if (auto* dock = window.layoutEditor()->parentWidget()) dock->hide();
    if (Status s = window.compareRuns(o.compareA, o.compareB, true); !s.isOk()) {
      std::cerr << "bubblescope: compare: " << s.message() << "\n";
      return 1;
    }
    for (TimelinePanel* p : {window.compareView()->panelA(), window.compareView()->panelB()}) {
      if (Status s = p->ingestAll(); !s.isOk()) return 1;
    }
    QApplication::processEvents();
    if (o.step >= 0) window.compareView()->alignAtStep(o.step);
  }
  if (o.what == "charts") window.tabs()->setCurrentIndex(MainWindow::kChartsTab);
  if (o.what == "metrics") window.tabs()->setCurrentIndex(MainWindow::kMetricsTab);
  if (o.what == "kernels") {  // the Kernels tab, its first row selected
    window.tabs()->setCurrentIndex(MainWindow::kKernelsTab);
    window.kernelsView()->selectRow(0);
  }
  if (o.what == "kernel-timeline") {  // the timeline, the Kernels tab's first row highlighted
    window.kernelsView()->selectRow(0);
    window.tabs()->setCurrentIndex(MainWindow::kTimelineTab);
  }
  if (o.what == "teaching") {  // the editor's layout, simulated beside the shown run
    if (auto* dock = window.layoutEditor()->parentWidget()) dock->hide();  // room for the lab
    if (Status s = window.simulateInLab(); !s.isOk()) {
      std::cerr << "bubblescope: simulate: " << s.message() << "\n";
      return 1;
    }
    if (o.labSteps >= 0) {
      window.teachingLab()->restart();
      for (int i = 0; i < o.labSteps; ++i) window.teachingLab()->stepForward();
    }
  }
  if (o.what == "planner") {  // the planner's best candidate, loaded into the editor
    if (o.planWorld > 0) window.planner()->findChild<QSpinBox*>("world")->setValue(o.planWorld);
    if (o.planMemoryGiB > 0) {
      window.planner()->findChild<QDoubleSpinBox*>("memory")->setValue(o.planMemoryGiB);
    }
    window.showPlanner();
    window.planner()->table()->selectRow(0);
  }
  if (o.what == "cluster-planner") {  // the Planner tab's GPU cluster page, planned
    window.tabs()->setCurrentWidget(window.plannerTabs());
    window.plannerTabs()->setCurrentWidget(window.clusterPlanner());
  }
  window.layoutEditor()->prediction()->predictNow();
  QApplication::processEvents();
  if (o.what.startsWith("chart:")) {
    const QString name = o.what.mid(6);
    for (int c = 0; c < ChartsPanel::kChartCount; ++c) {
      if (ChartsPanel::chartName(ChartsPanel::Chart(c)) != name) continue;
      const Status s =
          window.charts()->exportChart(ChartsPanel::Chart(c), o.out, o.width, o.height);
      if (!s.isOk()) std::cerr << "bubblescope: " << s.message() << "\n";
      return s.isOk() ? 0 : 1;
    }
    std::cerr << "bubblescope: no chart " << name.toStdString() << "\n";
    return 2;
  }
  if (o.what == "export") {  // what File > Export timeline writes, PNG or SVG
    const Status s = exportTimeline(panel->view(), window.timelineTitle(), o.out);
    if (!s.isOk()) std::cerr << "bubblescope: " << s.message() << "\n";
    return s.isOk() ? 0 : 1;
  }
  QWidget* target = &window;
  if (o.what == "timeline") target = o.idealReplay ? panel->parentWidget() : panel;
  if (o.what == "layout") target = window.layoutEditor()->parentWidget();
  if (o.what == "teaching") target = window.teachingLab();
  if (!target->grab().save(o.out)) {
    std::cerr << "bubblescope: cannot write " << o.out.toStdString() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace bubblescope::gui
