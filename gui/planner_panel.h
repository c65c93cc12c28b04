// PlannerPanel: the planner in the app (docs/prediction.md, "Plan"): world
// size, memory per rank, model, micro-batch size and where the costs come
// from -> the best layouts of layout::planLayouts with their predictions and
// the reason for each (PlannerTableModel). Selecting one emits layoutChosen;
// the main window loads it into the layout editor.
//
// Costs ("calibration" combo): the FLOPs estimate (prediction_format.h), a
// calibration stored in the open trace file (storage/calibration_store.h),
// or one measured from the shown run (analysis::calibrateFromRun). The
// chosen calibration is also the layout editor's (calibrationChanged).
//
// Contract: GUI thread only; the reader given to setTrace() is not owned and
// must outlive the panel or be replaced. Editing an input re-plans
// kReplanDelayMs after the last edit; plan() re-plans at once.
#pragma once

#include <QMap>
#include <QString>
#include <QTimer>
#include <QWidget>
#include <optional>

#include "common/status.h"
#include "planning/calibration.h"
#include "engine/layout/layout.h"
#include "planning/planner.h"
#include "storage/trace_reader.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSpinBox;
class QTableView;

namespace bubblescope::gui {

class PlannerTableModel;

class PlannerPanel : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kReplanDelayMs = 300;
  // Calibration combo data: the FLOPs estimate, the shown run, or (> 0) a
  // stored calibration's id.
  static constexpr qint64 kFlopsSource = 0;
  static constexpr qint64 kShownRunSource = -1;

  explicit PlannerPanel(QWidget* parent = nullptr);

  // The open trace file and the run shown: the calibration choices. Keeps
  // the chosen kind of source when it is still offered, else picks the
  // file's newest calibration, else the FLOPs estimate. A shown run still
  // running is not measured (it has no steps yet): call again when it ends.
  void setTrace(storage::TraceReader* reader, const QString& path, int64_t shownRunId);
  // The model of the "layout editor's model" choice.
  void setEditorModel(const layout::ModelConfig& model);

  layout::PlanRequest request() const;
  // The chosen measured costs; nullopt: the FLOPs estimate.
  const std::optional<layout::Calibration>& calibration() const { return calibration_; }
  QString calibrationSource() const { return calibrationSource_; }

  // Plans with the current inputs; the error (also shown) when nothing fits.
  Status plan();
  PlannerTableModel* candidates() const { return model_; }
  QTableView* table() const { return table_; }
  QString statusText() const;

  // A candidate's parallel layout (degrees, ZeRO, schedule, v, m, micro-batch
  // size, recompute, model) applied to `base`, which keeps the rest (steps,
  // backend, hosts, ...).
  static layout::Layout appliedTo(const layout::Layout& candidate, layout::Layout base);

 signals:
  void layoutChosen(const bubblescope::layout::Layout& candidate);
  void calibrationChanged();

 private:
  void fillCalibrations(qint64 keep);
  void onCalibrationChosen();
  void schedulePlan();

  QSpinBox* world_ = nullptr;
  QDoubleSpinBox* memory_ = nullptr;
  QComboBox* modelChoice_ = nullptr;
  QSpinBox* microBatchSize_ = nullptr;
  QSpinBox* top_ = nullptr;
  QComboBox* source_ = nullptr;
  QLabel* status_ = nullptr;
  QTableView* table_ = nullptr;
  PlannerTableModel* model_ = nullptr;
  QTimer replan_;
  storage::TraceReader* reader_ = nullptr;
  QString path_;
  int64_t shownRunId_ = 0;
  layout::ModelConfig editorModel_ = layout::Layout{}.model;
  std::optional<layout::Calibration> calibration_;
  QString calibrationSource_;
  QString sourceProblem_;                            // why the chosen source gave no calibration
  QMap<int64_t, layout::Calibration> stored_;        // the file's calibrations by id
  QMap<int64_t, layout::Calibration> measuredRuns_;  // calibrateFromRun, per run of path_
};

}  // namespace bubblescope::gui
