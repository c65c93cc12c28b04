// KernelsTableModel: the app's Kernels table, one row per (rank, kernel) of
// a RunReport's GPU kernel breakdown (storage/analysis/kernel_breakdown.h,
// the same figures as `report`'s top-kernel table, every kernel of
// computation, communication or other type), read-only.
//
// Contract: formatted text under DisplayRole; under kValueRole the raw value
// a QSortFilterProxyModel sorts by (numbers as doubles, times in ms, shares
// in [0, 1]; the name and type as text); kRankRole the rank in every column.
// kernelAt(row) says where the kernel's longest record ran, for the
// timeline to select it.
#pragma once

#include <QAbstractTableModel>
#include <optional>
#include <vector>

#include "storage/analysis/kernel_breakdown.h"
#include "storage/analysis/run_report.h"

namespace bubblescope::gui {

class KernelsTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    kRank,
    kType,
    kCount,
    kTotalMs,
    kMeanUs,
    kP95Us,
    kShare,
    kRanks,
    kMaxOverMean,
    kName,  // last: it takes the width left
    kColumnCount
  };
  static constexpr int kValueRole = Qt::UserRole + 1;
  static constexpr int kRankRole = Qt::UserRole + 2;

  explicit KernelsTableModel(QObject* parent = nullptr);

  void setReport(const analysis::RunReport& report);
  void clear();
  // The longest record of the row's kernel (rank, lane, name, start, end;
  // the other fields unset); nullopt for a row out of range.
  std::optional<trace_model::Event> longestRecordAt(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  struct Row {
    int32_t rank = 0;
    analysis::KernelStats stats;
    double share = 0;  // of the rank's kernel time
    analysis::KernelSpread spread;
  };
  QVariant value(const Row& r, int column) const;

  std::vector<Row> rows_;
};

}  // namespace bubblescope::gui
