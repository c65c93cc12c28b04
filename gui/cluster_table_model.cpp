#include "gui/cluster_table_model.h"

#include <QStringList>

#include "gui/prediction_format.h"
#include "gui/time_format.h"
#include "planning/prediction_summary.h"

namespace bubblescope::gui {

namespace {

QString percent(double share) {
  return QStringLiteral("%1%").arg(share * 100, 0, 'f', 1);
}

}  // namespace

ClusterTableModel::ClusterTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void ClusterTableModel::setCandidates(std::vector<layout::ClusterCandidate> candidates,
                                      double memoryBytes) {
  beginResetModel();
  candidates_ = std::move(candidates);
  memoryBytes_ = memoryBytes;
  endResetModel();
}

int ClusterTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(candidates_.size());
}

int ClusterTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant ClusterTableModel::value(const layout::ClusterCandidate& c, int row, int column) const {
  const layout::Prediction& p = c.prediction;
  switch (column) {
    case kRankColumn:
      return row + 1;
    case kStep:
      return p.stepNs;
    case kTokensPerSecond:
      return p.tokensPerSecond;
    case kTflopsPerGpu:
      return c.tflopsPerGpu;
    case kMfu:
      return c.mfu;
    case kMemory:
      return c.peakMemoryBytes;
    case kBubble:
      return worstBubble(p);
    case kExposedComm:
      return totalExposedCommNs(p);
    default:
      return {};
  }
}

QString ClusterTableModel::text(const layout::ClusterCandidate& c, int row, int column) const {
  const layout::Prediction& p = c.prediction;
  switch (column) {
    case kRankColumn:
      return QString::number(row + 1);
    case kLayout:
      return layoutShortName(c.layout);
    case kStep:
      return formatDuration(p.stepNs);
    case kTokensPerSecond:
      return tokensPerSecondText(p.tokensPerSecond);
    case kTflopsPerGpu:
      return QString::number(c.tflopsPerGpu, 'f', 1);
    case kMfu:
      return percent(c.mfu);
    case kMemory:
      return memoryBytes_ > 0 ? tr("%1 (%2)")
                                    .arg(formatBytes(static_cast<int64_t>(c.peakMemoryBytes)))
                                    .arg(percent(c.peakMemoryBytes / memoryBytes_))
                              : formatBytes(static_cast<int64_t>(c.peakMemoryBytes));
    case kBubble:
      return percent(worstBubble(p));
    case kExposedComm:
      return exposedCommText(p);
    case kLimit:
      return QString::fromStdString(c.limit);
    default:
      return {};
  }
}

QString ClusterTableModel::toolTip(const layout::ClusterCandidate& c) const {
  QStringList lines{layoutShortName(c.layout), predictionLine(c.prediction)};
  lines << tr("%1 TFLOP/s per GPU, MFU %2").arg(c.tflopsPerGpu, 0, 'f', 1).arg(percent(c.mfu));
  lines << tr("limited by %1").arg(QString::fromStdString(c.limit));
  return lines.join('\n');
}

QVariant ClusterTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const layout::ClusterCandidate& c = candidates_[index.row()];
  if (role == Qt::DisplayRole) return text(c, index.row(), index.column());
  if (role == kValueRole) return value(c, index.row(), index.column());
  // The limit may be narrowed and wrapped (planner_page.h): its tooltip
  // gives it whole, over the candidate's.
  if (role == Qt::ToolTipRole && index.column() == kLimit) {
    return text(c, index.row(), index.column()) + QStringLiteral("\n\n") + toolTip(c);
  }
  if (role == Qt::ToolTipRole) return toolTip(c);
  if (role == Qt::TextAlignmentRole && value(c, index.row(), index.column()).isValid()) {
    return int(Qt::AlignRight | Qt::AlignVCenter);
  }
  return {};
}

QVariant ClusterTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= kColumnCount) return {};
  static const char* const kHeaders[kColumnCount] = {
      "#",   "Layout",         "Iteration", "Tokens/s",     "TFLOP/s/GPU",
      "MFU", "Memory per GPU", "Bubble",    "Exposed comm", "Limited by"};
  static const char* const kToolTips[kColumnCount] = {
      "Rank by predicted iteration time",
      "dp tp pp, ZeRO stage, schedule, micro-batches, micro-batch size, recompute",
      "Predicted iteration time",
      "Predicted tokens per second",
      "Executed FLOPs (recompute counted) per GPU per second",
      "Model FLOPs utilisation: model FLOPs (no recompute) / (time x GPUs x peak)",
      "The largest stage's predicted memory per GPU, and its share of the GPU's",
      "The worst stage's predicted bubble (idle / iteration)",
      "Predicted exposed communication per iteration, by dimension",
      "What limits it most"};
  if (role == Qt::DisplayRole) return tr(kHeaders[section]);
  if (role == Qt::ToolTipRole) return tr(kToolTips[section]);
  return {};
}

}  // namespace bubblescope::gui
