// MetricsTableModel: one row per rank of a RunReport, one column per metric
// (the report's per-rank table), read-only.
//
// Contract: values are formatted text under DisplayRole and the raw number
// under kValueRole (ratios in [0, 1], times in ms per step; an invalid
// QVariant when unknown); the rank id is under kRankRole in every column.
#pragma once

#include <QAbstractTableModel>

#include "storage/analysis/run_report.h"

namespace bubblescope::gui {

class MetricsTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    kRank,
    kCoords,
    kStepMs,
    kComputeMs,
    kUtilisation,
    kCommRatio,
    kOverlap,
    kExposedComm,
    kWait,
    kIdle,
    kBubble,
    kColumnCount
  };
  static constexpr int kValueRole = Qt::UserRole + 1;
  static constexpr int kRankRole = Qt::UserRole + 2;

  explicit MetricsTableModel(QObject* parent = nullptr);

  void setReport(const analysis::RunReport& report);
  void clear();
  int rowOfRank(int32_t rank) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;
  // The coordinates column's tooltip: the rank's host, pid, and its clock
  // offset onto the run's timeline with the offset's bound (docs/cluster.md).
  static QString clockToolTip(const trace_model::RankInfo& info);
  // The bubble column's tooltip on a rank without steps (RankReport::wholeRun),
  // whose bubble reads "no steps": why it has none.
  static QString noStepsToolTip();

 private:
  QVariant value(const analysis::RankReport& r, int column) const;

  std::vector<analysis::RankReport> ranks_;
};

}  // namespace bubblescope::gui
