// PlannerTableModel: the planner's candidates (layout::planLayouts), one row
// each, best first, read-only.
//
// Contract: formatted text under DisplayRole (prediction_format.h, as the
// layout editor's prediction line says it) and the raw number under
// kValueRole: step ns, tokens/s, the worst stage's bubble in [0, 1], exposed
// communication ns per step summed over dimensions, the largest stage's
// memory in bytes. The candidate's layout is candidate(row).
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "planning/planner.h"

namespace bubblescope::gui {

class PlannerTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    kRankColumn,
    kLayout,
    kStep,
    kTokensPerSecond,
    kBubble,
    kExposedComm,
    kMemory,
    kRule,
    kLimit,
    kColumnCount
  };
  static constexpr int kValueRole = Qt::UserRole + 1;

  explicit PlannerTableModel(QObject* parent = nullptr);

  void setCandidates(std::vector<layout::PlanCandidate> candidates);
  const layout::PlanCandidate& candidate(int row) const { return candidates_.at(row); }
  const std::vector<layout::PlanCandidate>& candidates() const { return candidates_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  QVariant value(const layout::PlanCandidate& c, int column) const;
  QString text(const layout::PlanCandidate& c, int row, int column) const;
  QString toolTip(const layout::PlanCandidate& c) const;

  std::vector<layout::PlanCandidate> candidates_;
};

}  // namespace bubblescope::gui
