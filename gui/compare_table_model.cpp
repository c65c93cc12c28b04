#include "gui/compare_table_model.h"

#include <QFont>

namespace bubblescope::gui {

CompareTableModel::CompareTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void CompareTableModel::setReports(const analysis::RunReport& a, const analysis::RunReport& b) {
  beginResetModel();
  rows_ = analysis::compareRuns(a, b);
  runA_ = a.run.id;
  runB_ = b.run.id;
  endResetModel();
  emit headerDataChanged(Qt::Horizontal, 0, kColumnCount - 1);
}

void CompareTableModel::clear() {
  beginResetModel();
  rows_.clear();
  runA_ = runB_ = 0;
  endResetModel();
}

int CompareTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int CompareTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant CompareTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= kColumnCount) return {};
  const analysis::ComparisonRow& r = rows_[index.row()];
  if (role == Qt::FontRole) {
    QFont f;
    f.setBold(r.a != r.b);
    return f;
  }
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case kMetric:
      return QString::fromStdString(r.metric);
    case kA:
      return QString::fromStdString(r.a);
    case kB:
      return QString::fromStdString(r.b);
    case kChange:
      return QString::fromStdString(r.change);
    default:
      return {};
  }
}

QVariant CompareTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kMetric:
      return tr("metric");
    case kA:
      return runA_ > 0 ? tr("run %1 (A)").arg(runA_) : tr("A");
    case kB:
      return runB_ > 0 ? tr("run %1 (B)").arg(runB_) : tr("B");
    case kChange:
      return tr("change B vs A");
    default:
      return {};
  }
}

}  // namespace bubblescope::gui
