#include "gui/runs_table_model.h"

#include <QBrush>
#include <QColor>
#include <set>

#include "gui/time_format.h"

namespace bubblescope::gui {

RunsTableModel::RunsTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void RunsTableModel::setRows(std::vector<RunRow> rows) {
  beginResetModel();
  rows_ = std::move(rows);
  endResetModel();
}

void RunsTableModel::syncRows(const std::vector<RunRow>& rows) {
  std::set<int64_t> keep;
  for (const RunRow& row : rows) keep.insert(row.id);
  // From the end, so that the rows still to look at keep their indices.
  for (int r = static_cast<int>(rows_.size()) - 1; r >= 0; --r) {
    if (keep.count(rows_[r].id) != 0) continue;
    beginRemoveRows({}, r, r);
    rows_.erase(rows_.begin() + r);
    endRemoveRows();
  }
  for (const RunRow& row : rows) updateRow(row);
}

void RunsTableModel::updateRow(const RunRow& row) {
  const int r = rowOfRun(row.id);
  if (r < 0) {
    const int n = static_cast<int>(rows_.size());
    beginInsertRows({}, n, n);
    rows_.push_back(row);
    endInsertRows();
    return;
  }
  rows_[r] = row;
  emit dataChanged(index(r, 0), index(r, kColumnCount - 1));
}

int RunsTableModel::rowOfRun(int64_t runId) const {
  for (size_t i = 0; i < rows_.size(); ++i) {
    if (rows_[i].id == runId) return static_cast<int>(i);
  }
  return -1;
}

int RunsTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int RunsTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant RunsTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= static_cast<int>(rows_.size()) ||
      index.column() >= kColumnCount) {
    return {};
  }
  const RunRow& r = rows_[index.row()];
  if (role == kRunIdRole) return QVariant::fromValue<qlonglong>(r.id);
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case kRun:
        return r.name.isEmpty() ? QStringLiteral("#%1").arg(r.id)
                                : QStringLiteral("#%1 %2").arg(r.id).arg(r.name);
      case kLayout:
        return r.layoutSummary;
      case kStatus:
        return healthText(r.health);
      case kSteps:
        return r.steps;
      case kStepTime:
        return r.meanStepNs ? formatDuration(*r.meanStepNs) : QStringLiteral("–");
      case kLoss:
        return r.lastLoss ? QString::number(*r.lastLoss, 'f', 4) : QStringLiteral("–");
      case kRanks:
        if (r.worldSize > 0 && r.ranksPresent != r.worldSize) {
          return tr("%1 of %2").arg(r.ranksPresent).arg(r.worldSize);
        }
        return r.ranksPresent;
      case kEvents:
        return QVariant::fromValue<qlonglong>(r.events);
      case kSource:
        return r.source;
      default:
        return {};
    }
  }
  if (role == Qt::ToolTipRole) {
    // The whole text of a column the list may cut.
    if (index.column() == kRun || index.column() == kLayout) return data(index, Qt::DisplayRole);
    if (index.column() == kStatus && !r.error.isEmpty()) return r.error;
    if (index.column() == kStatus && r.health == storage::RunHealth::kInterrupted) {
      return tr("The run says running, but the process writing it is gone.");
    }
    if (index.column() == kRanks) {
      return (r.ranksPresent == 1 ? tr("1 rank in the file")
                                  : tr("%1 ranks in the file").arg(r.ranksPresent)) +
             (r.worldSize > 0 ? tr("; world size %1").arg(r.worldSize) : QString());
    }
    if (index.column() == kStepTime)
      return tr(
          "Mean over steps of the step time (latest rank's end − earliest rank's "
          "start), as Charts and `report` show it");
    return {};
  }
  if (role == Qt::ForegroundRole && index.column() == kStatus) {
    switch (r.health) {
      case storage::RunHealth::kFailed:
        return QBrush(QColor(0xc62828));
      case storage::RunHealth::kInterrupted:
        return QBrush(QColor(0xef6c00));
      case storage::RunHealth::kStopped:
        return QBrush(QColor(0x6d4c41));
      case storage::RunHealth::kRunning:
        return QBrush(QColor(0x1565c0));
      case storage::RunHealth::kFinished:
        return {};
    }
  }
  if (role == Qt::TextAlignmentRole && index.column() >= kSteps && index.column() <= kEvents) {
    return QVariant(Qt::AlignRight | Qt::AlignVCenter);
  }
  return {};
}

QVariant RunsTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kRun:
      return tr("Run");
    case kLayout:
      return tr("Layout");
    case kStatus:
      return tr("Status");
    case kSteps:
      return tr("Steps");
    case kStepTime:
      return tr("Mean step");
    case kLoss:
      return tr("Loss");
    case kRanks:
      return tr("Ranks");
    case kEvents:
      return tr("Events");
    case kSource:
      return tr("Source");
    default:
      return {};
  }
}

}  // namespace bubblescope::gui
