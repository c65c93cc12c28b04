// MainWindow's prediction parts (docs/prediction.md, "In the app"): the
// planner dock, whose chosen calibration the layout editor's prediction
// uses and whose selected candidate the editor loads.
#include <QDockWidget>
#include <QTabWidget>

#include "gui/layout_editor.h"
#include "gui/main_window.h"
#include "gui/planner_panel.h"
#include "gui/prediction_label.h"
#include "gui/timeline_replay.h"

namespace bubblescope::gui {

void MainWindow::buildPlanner() {
  planner_ = new PlannerPanel(this);
  tabs_->insertTab(kPlannerTab, planner_, tr("Planner"));
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
