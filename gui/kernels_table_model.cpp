#include "gui/kernels_table_model.h"

namespace bubblescope::gui {

KernelsTableModel::KernelsTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void KernelsTableModel::setReport(const analysis::RunReport& report) {
  beginResetModel();
  rows_.clear();
  for (const analysis::RankReport& r : report.ranks) {
    if (!r.kernels) continue;
    const analysis::KernelBreakdown& b = r.kernels->breakdown;
    const double total = static_cast<double>(b.totalNs());
    for (const analysis::KernelStats* k : analysis::topKernels(b, -1)) {
      Row row;
      row.rank = r.info.rank;
      row.stats = *k;
      row.share = total > 0 ? static_cast<double>(k->totalNs) / total : 0.0;
      auto s = report.kernelSpreads.find(k->name);
      if (s != report.kernelSpreads.end()) row.spread = s->second;
      rows_.push_back(std::move(row));
    }
  }
  endResetModel();
}

void KernelsTableModel::clear() {
  beginResetModel();
  rows_.clear();
  endResetModel();
}

std::optional<trace_model::Event> KernelsTableModel::longestRecordAt(int row) const {
  if (row < 0 || row >= rowCount()) return std::nullopt;
  const Row& r = rows_[row];
  trace_model::Event e;
  e.rank = r.rank;
  e.lane = r.stats.longestLane;
  e.name = r.stats.name;
  e.startNs = r.stats.longestStartNs;
  e.endNs = r.stats.longestStartNs + r.stats.maxNs;
  return e;
}

int KernelsTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int KernelsTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant KernelsTableModel::value(const Row& r, int column) const {
  const analysis::KernelStats& k = r.stats;
  switch (column) {
    case kRank:
      return r.rank;
    case kName:
      return QString::fromStdString(k.name);
    case kType:
      return QString::fromUtf8(trace_model::toString(k.type).data(),
                               static_cast<qsizetype>(trace_model::toString(k.type).size()));
    case kCount:
      return static_cast<qlonglong>(k.count);
    case kTotalMs:
      return static_cast<double>(k.totalNs) / 1e6;
    case kMeanUs:
      return k.meanNs() / 1e3;
    case kP95Us:
      return static_cast<double>(k.p95Ns) / 1e3;
    case kShare:
      return r.share;
    case kRanks:
      return r.spread.ranks;
    case kMaxOverMean:
      return r.spread.maxOverMean();
    default:
      return {};
  }
}

QVariant KernelsTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= kColumnCount) return {};
  const Row& r = rows_[index.row()];
  const int column = index.column();
  if (role == kRankRole) return r.rank;
  if (role == kValueRole) return value(r, column);
  if (role == Qt::TextAlignmentRole) {
    return column == kName || column == kType ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                                              : QVariant(Qt::AlignRight | Qt::AlignVCenter);
  }
  if (role == Qt::ToolTipRole) {
    if (column == kName) return QString::fromStdString(r.stats.name);
    if (column == kRanks || column == kMaxOverMean) {
      return QStringLiteral(
                 "total on the %1 ranks that ran it: min %2 ms (rank %3), max %4 ms "
                 "(rank %5), mean %6 ms")
          .arg(r.spread.ranks)
          .arg(static_cast<double>(r.spread.minTotalNs) / 1e6, 0, 'f', 3)
          .arg(r.spread.minRank)
          .arg(static_cast<double>(r.spread.maxTotalNs) / 1e6, 0, 'f', 3)
          .arg(r.spread.maxRank)
          .arg(r.spread.meanTotalNs / 1e6, 0, 'f', 3);
    }
    return {};
  }
  if (role != Qt::DisplayRole) return {};
  const QVariant v = value(r, column);
  switch (column) {
    case kTotalMs:
      return QString::number(v.toDouble(), 'f', 3);
    case kMeanUs:
    case kP95Us:
      return QString::number(v.toDouble(), 'f', 1);
    case kShare:
      return QStringLiteral("%1%").arg(v.toDouble() * 100.0, 0, 'f', 1);
    case kMaxOverMean:
      return QString::number(v.toDouble(), 'f', 2);
    default:
      return v;
  }
}

QVariant KernelsTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  static const char* kNames[kColumnCount] = {"rank",   "type",  "count", "total ms", "mean us",
                                             "p95 us", "share", "ranks", "max/mean", "kernel"};
  static const char* kTips[kColumnCount] = {
      "the rank",
      "Holistic Trace Analysis's kernel type",
      "records of this kernel on the rank",
      "summed duration on the rank",
      "mean duration",
      "95th percentile of the durations (nearest rank)",
      "share of the rank's kernel time (all GPU records' summed durations)",
      "ranks that ran this kernel",
      "the largest rank total over the mean rank total: above 1, a rank straggles",
      "the kernel's name (whole in its tooltip)"};
  if (section < 0 || section >= kColumnCount) return {};
  if (role == Qt::DisplayRole) return QString::fromLatin1(kNames[section]);
  if (role == Qt::ToolTipRole) return QString::fromLatin1(kTips[section]);
  return {};
}

}  // namespace bubblescope::gui
