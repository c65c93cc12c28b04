#include "gui/planner_table_model.h"

#include <QStringList>

#include "gui/prediction_format.h"
#include "gui/time_format.h"
#include "planning/prediction_summary.h"

namespace bubblescope::gui {

PlannerTableModel::PlannerTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void PlannerTableModel::setCandidates(std::vector<layout::PlanCandidate> candidates) {
  beginResetModel();
  candidates_ = std::move(candidates);
  endResetModel();
}

int PlannerTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(candidates_.size());
}

int PlannerTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant PlannerTableModel::value(const layout::PlanCandidate& c, int column) const {
  const layout::Prediction& p = c.prediction;
  switch (column) {
    case kStep:
      return p.stepNs;
    case kTokensPerSecond:
      return p.tokensPerSecond;
    case kBubble:
      return worstBubble(p);
    case kExposedComm:
      return totalExposedCommNs(p);
    case kMemory:
      return c.peakMemoryBytes;
    default:
      return {};
  }
}

QString PlannerTableModel::text(const layout::PlanCandidate& c, int row, int column) const {
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
    case kBubble:
      return QStringLiteral("%1%").arg(worstBubble(p) * 100, 0, 'f', 1);
    case kExposedComm:
      return exposedCommText(p);
    case kMemory:
      return formatBytes(static_cast<int64_t>(c.peakMemoryBytes));
    case kRule:
      return QString::fromStdString(c.rule);
    case kLimit:
      return QString::fromStdString(c.limit);
    default:
      return {};
  }
}

QString PlannerTableModel::toolTip(const layout::PlanCandidate& c) const {
  const layout::Prediction& p = c.prediction;
  QStringList lines{layoutShortName(c.layout), predictionLine(p)};
  for (size_t k = 0; k < p.bubble.size(); ++k) {
    lines << tr("stage %1: bubble %2%, memory %3")
                 .arg(k)
                 .arg(p.bubble[k] * 100, 0, 'f', 1)
                 .arg(k < p.memoryBytes.size() ? formatBytes(static_cast<int64_t>(p.memoryBytes[k]))
                                               : QString("?"));
  }
  lines << tr("Select to load it into the layout editor.");
  return lines.join('\n');
}

QVariant PlannerTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const layout::PlanCandidate& c = candidates_[index.row()];
  if (role == Qt::DisplayRole) return text(c, index.row(), index.column());
  if (role == kValueRole) return value(c, index.column());
  // A text column may be narrowed and wrapped (planner_page.h): its tooltip
  // gives its text whole, over the candidate's.
  if (role == Qt::ToolTipRole && (index.column() == kRule || index.column() == kLimit)) {
    return text(c, index.row(), index.column()) + QStringLiteral("\n\n") + toolTip(c);
  }
  if (role == Qt::ToolTipRole) return toolTip(c);
  if (role == Qt::TextAlignmentRole && value(c, index.column()).isValid()) {
    return int(Qt::AlignRight | Qt::AlignVCenter);
  }
  return {};
}

QVariant PlannerTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= kColumnCount) return {};
  static const char* const kHeaders[kColumnCount] = {
      "#", "Layout", "Step", "Tokens/s", "Bubble", "Exposed comm", "Memory", "Why", "Limited by"};
  static const char* const kToolTips[kColumnCount] = {
      "Rank by predicted tokens/s",
      "dp tp pp, ZeRO stage, schedule, micro-batches, micro-batch size, recompute",
      "Predicted step time",
      "Predicted tokens per second",
      "The worst stage's predicted bubble (idle / step)",
      "Predicted exposed communication per step, by dimension",
      "The largest stage's predicted memory per rank",
      "The seeds' rule that picks this layout",
      "What limits it most"};
  if (role == Qt::DisplayRole) return tr(kHeaders[section]);
  if (role == Qt::ToolTipRole) return tr(kToolTips[section]);
  return {};
}

}  // namespace bubblescope::gui
