// ClusterPlannerPanel: the cluster planner in the app (docs/prediction.md,
// "The cluster model"), the same question as `plan --hardware`: which
// layout for this model on N GPUs of a hardware profile at a global batch?
// Inputs: a built-in hardware profile (resources/hardware), the GPU count,
// a model preset, the global batch in sequences, the GEMM dtype (those the
// profile prices) and how many to show; out: layout::planCluster's best
// candidates in a sortable ClusterTableModel, and a status line (how many
// layouts were searched, fit, simulated; or the planner's one message).
//
// Contract: GUI thread only. Editing an input re-plans kReplanDelayMs after
// the last edit; plan() re-plans at once and returns the planner's error.
// planCluster answers thousands of GPUs in well under a second (its search
// is pruned before simulating), so it runs on the GUI thread.
#pragma once

#include <QTimer>
#include <QWidget>

#include "common/status.h"
#include "planning/cluster_plan.h"

class QComboBox;
class QLabel;
class QSpinBox;
class QSortFilterProxyModel;
class QTableView;

namespace bubblescope::gui {

class ClusterTableModel;

class ClusterPlannerPanel : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kReplanDelayMs = 300;

  explicit ClusterPlannerPanel(QWidget* parent = nullptr);

  // The request the inputs describe; an unknown profile or model (none
  // should be offered) is an error.
  Result<layout::ClusterPlanRequest> request() const;
  Status plan();

  ClusterTableModel* candidates() const { return model_; }
  QTableView* table() const { return table_; }
  QString statusText() const;

 private:
  void schedulePlan();
  void fillDtypes();

  QComboBox* hardware_ = nullptr;
  QSpinBox* gpus_ = nullptr;
  QComboBox* modelChoice_ = nullptr;
  QSpinBox* globalBatch_ = nullptr;
  QComboBox* dtype_ = nullptr;
  QSpinBox* top_ = nullptr;
  QLabel* device_ = nullptr;
  QLabel* status_ = nullptr;
  QTableView* table_ = nullptr;
  ClusterTableModel* model_ = nullptr;
  QSortFilterProxyModel* sorted_ = nullptr;
  QTimer replan_;
};

}  // namespace bubblescope::gui
