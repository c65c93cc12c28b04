// MainWindow's prediction parts (docs/prediction.md, "In the app"): the
// planner tab, with this machine's planner (whose chosen calibration the
// layout editor's prediction uses and whose selected candidate the editor
// loads) and the GPU cluster planner beside it.
#include <QDockWidget>
#include <QTabWidget>

#include "gui/cluster_planner_panel.h"
#include "gui/cluster_table_model.h"
#include "gui/layout_editor.h"
#include "gui/main_window.h"
#include "gui/planner_panel.h"
#include "gui/prediction_label.h"
#include "gui/timeline_replay.h"

namespace bubblescope::gui {

void MainWindow::buildPlanner() {
  planner_ = new PlannerPanel(this);
  clusterPlanner_ = new ClusterPlannerPanel(this);
  plannerTabs_ = new QTabWidget(this);
  plannerTabs_->setObjectName("plannerTabs");
  plannerTabs_->setDocumentMode(true);
  plannerTabs_->addTab(planner_, tr("This machine"));
  plannerTabs_->setTabToolTip(0, tr("Layouts for ranks on this machine, from its measured costs"));
  plannerTabs_->addTab(clusterPlanner_, tr("GPU cluster"));
  plannerTabs_->setTabToolTip(
      1, tr("Layouts for a model on N GPUs of a hardware profile (plan --hardware)"));
  tabs_->insertTab(kPlannerTab, plannerTabs_, tr("Planner"));
  // The cluster planner plans when first shown.
  connect(plannerTabs_, &QTabWidget::currentChanged, this, [this](int index) {
    if (plannerTabs_->widget(index) == clusterPlanner_ &&
        clusterPlanner_->candidates()->rowCount() == 0) {
      (void)clusterPlanner_->plan();
    }
  });
  planner_->setEditorModel(editor_->layout().model);
  connect(editor_, &LayoutEditor::layoutChanged, this,
          [this] { planner_->setEditorModel(editor_->layout().model); });
  connect(planner_, &PlannerPanel::calibrationChanged, this, [this] {
    editor_->prediction()->setCalibration(planner_->calibration(), planner_->calibrationSource());
  });
  connect(planner_, &PlannerPanel::layoutChosen, this, [this](const layout::Layout& candidate) {
    editor_->setLayout(PlannerPanel::appliedTo(candidate, editor_->layout()));
    if (auto* editorDock = qobject_cast<QDockWidget*>(editor_->parentWidget())) {
      editorDock->show();
    }
  });
}

const storage::RunRecord& MainWindow::shownRun() const {
  return idealReplay_->measuredRun();
}

void MainWindow::showPlanner() {
  tabs_->setCurrentIndex(kPlannerTab);
  (void)planner_->plan();
}

}  // namespace bubblescope::gui
