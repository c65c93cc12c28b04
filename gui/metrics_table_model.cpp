#include "gui/metrics_table_model.h"

#include "storage/analysis/imported_layout.h"

namespace bubblescope::gui {

namespace {

QVariant ratio(std::optional<double> v) {
  return v ? QVariant(*v) : QVariant();
}

}  // namespace

MetricsTableModel::MetricsTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void MetricsTableModel::setReport(const analysis::RunReport& report) {
  beginResetModel();
  ranks_ = report.ranks;
  endResetModel();
}

void MetricsTableModel::clear() {
  beginResetModel();
  ranks_.clear();
  endResetModel();
}

int MetricsTableModel::rowOfRank(int32_t rank) const {
  for (size_t i = 0; i < ranks_.size(); ++i) {
    if (ranks_[i].info.rank == rank) return static_cast<int>(i);
  }
  return -1;
}

int MetricsTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(ranks_.size());
}

int MetricsTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant MetricsTableModel::value(const analysis::RankReport& r, int column) const {
  const double perStepMs = r.steps > 0 ? 1e-6 / r.steps : 0.0;
  switch (column) {
    case kRank:
      return r.info.rank;
    case kStepMs:
      return r.steps > 0 ? QVariant(r.stepNs * perStepMs) : QVariant();
    case kComputeMs:
      return r.steps > 0 ? QVariant(r.computeNs * perStepMs) : QVariant();
    case kUtilisation:
      return ratio(r.utilization());
    case kCommRatio:
      return ratio(r.commRatio());
    case kOverlap:
      return ratio(r.overlap());
    case kExposedComm:
      return ratio(r.exposedCommRatio());
    case kWait:
      return ratio(r.waitRatio());
    case kIdle:
      return ratio(r.idleRatio());
    case kBubble:
      return ratio(r.bubbleFraction());
    default:
      return {};
  }
}

QString MetricsTableModel::clockToolTip(const trace_model::RankInfo& info) {
  return QStringLiteral(
             "host %1 · pid %2\nclock offset %3 s ± %4 ms (added to this rank's times "
             "to put them on the run's timeline)")
      .arg(QString::fromStdString(info.host))
      .arg(info.pid)
      .arg(static_cast<double>(info.clockOffsetNs) / 1e9, 0, 'f', 6)
      .arg(static_cast<double>(info.clockUncertaintyNs) / 1e6, 0, 'f', 3);
}

QString MetricsTableModel::noStepsToolTip() {
  return QStringLiteral(
      "This rank marks no step (no step records or step ranges in the trace), so its whole run "
      "was analysed as one step. A run without steps has no pipeline bubble; the time it spent "
      "neither computing nor communicating is in the idle column.");
}

QVariant MetricsTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= kColumnCount) return {};
  const analysis::RankReport& r = ranks_[index.row()];
  const int column = index.column();
  if (role == kRankRole) return r.info.rank;
  if (role == kValueRole) return column == kCoords ? QVariant() : value(r, column);
  if (role == Qt::TextAlignmentRole) {
    return column == kCoords ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                             : QVariant(Qt::AlignRight | Qt::AlignVCenter);
  }
  if (role == Qt::ToolTipRole && column == kCoords) return clockToolTip(r.info);
  if (role == Qt::ToolTipRole && column == kBubble && r.wholeRun) return noStepsToolTip();
  if (role != Qt::DisplayRole) return {};
  if (column == kCoords) {
    // An unknown coordinate (an imported rank: < 0) reads "-" as in the
    // report; none known reads "unknown" (not "pp-1 tp-1 dp-1").
    const auto c = [](int32_t v) { return QString::fromStdString(analysis::coordinateText(v)); };
    const QString host = QString::fromStdString(r.info.host);
    const QString coords =
        r.info.pp < 0 && r.info.tp < 0 && r.info.dp < 0
            ? QStringLiteral("unknown")
            : QStringLiteral("pp%1 tp%2 dp%3").arg(c(r.info.pp), c(r.info.tp), c(r.info.dp));
    return host.isEmpty() ? coords : coords + QStringLiteral(" · ") + host;
  }
  // A rank that marks no step has no pipeline bubble (not "81.6%" of its
  // whole run): said so, the reason in the tooltip.
  if (column == kBubble && r.wholeRun) return QStringLiteral("no steps");
  const QVariant v = value(r, column);
  if (!v.isValid()) return QStringLiteral("-");
  if (column == kRank) return v;
  if (column == kStepMs || column == kComputeMs) return QString::number(v.toDouble(), 'f', 2);
  return QStringLiteral("%1%").arg(v.toDouble() * 100.0, 0, 'f', 1);
}

QVariant MetricsTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* kNames[kColumnCount] = {
      "rank",    "coordinates",  "step ms", "compute ms", "utilisation", "comm",
      "overlap", "exposed comm", "wait",    "idle",       "bubble"};
  return section >= 0 && section < kColumnCount ? QString::fromLatin1(kNames[section]) : QVariant();
}

}  // namespace bubblescope::gui
