// ClusterTableModel: the cluster planner's candidates (layout::planCluster),
// one row each, fastest first, read-only: the same figures as `plan
// --hardware` (cli/cluster_text.h) in a sortable table.
//
// Contract: formatted text under DisplayRole and the raw number under
// kValueRole (step ns, tokens/s, TFLOP/s per GPU, MFU in [0, 1], memory per
// GPU in bytes, the worst stage's bubble in [0, 1], exposed communication ns
// per step summed over dimensions), so a QSortFilterProxyModel sorting on
// kValueRole orders by value. The candidate is candidate(row).
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "planning/cluster_plan.h"

namespace bubblescope::gui {

class ClusterTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    kRankColumn,
    kLayout,
    kStep,
    kTokensPerSecond,
    kTflopsPerGpu,
    kMfu,
    kMemory,
    kBubble,
    kExposedComm,
    kLimit,
    kColumnCount
  };
  static constexpr int kValueRole = Qt::UserRole + 1;

  explicit ClusterTableModel(QObject* parent = nullptr);

  // `memoryBytes`: the GPU's, for the memory column's share.
  void setCandidates(std::vector<layout::ClusterCandidate> candidates, double memoryBytes);
  const layout::ClusterCandidate& candidate(int row) const { return candidates_.at(row); }
  const std::vector<layout::ClusterCandidate>& candidates() const { return candidates_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  QVariant value(const layout::ClusterCandidate& c, int row, int column) const;
  QString text(const layout::ClusterCandidate& c, int row, int column) const;
  QString toolTip(const layout::ClusterCandidate& c) const;

  std::vector<layout::ClusterCandidate> candidates_;
  double memoryBytes_ = 0;
};

}  // namespace bubblescope::gui
