// CompareTableModel: the rows of analysis::compareRuns (metric, run A, run B,
// change), read-only. Rows whose A and B differ are shown bold.
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "storage/analysis/run_comparison.h"

namespace bubblescope::gui {

class CompareTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kMetric, kA, kB, kChange, kColumnCount };

  explicit CompareTableModel(QObject* parent = nullptr);

  // Compares a (the baseline) with b; headers name the runs.
  void setReports(const analysis::RunReport& a, const analysis::RunReport& b);
  void clear();
  const std::vector<analysis::ComparisonRow>& rows() const { return rows_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  std::vector<analysis::ComparisonRow> rows_;
  int64_t runA_ = 0, runB_ = 0;
};

}  // namespace bubblescope::gui
