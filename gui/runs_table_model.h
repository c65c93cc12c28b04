// RunsTableModel: the runs of the open trace file, one row each.
//
// Contract: fed whole value structs (setRows / updateRow); holds no reader.
// Columns: run, layout, status, steps, step time (mean), loss, ranks,
// events, source. Ranks are the ranks present in the file; the world size
// is its own fact beside them when it differs ("2 of 128": an import of two
// ranks' traces of a 128-rank job), with both spelled out in the tooltip. Qt::ToolTipRole on status gives a failed run's error, on
// run and layout their whole text (the window may cut them).
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "gui/run_rows.h"

namespace bubblescope::gui {

class RunsTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    kRun,
    kLayout,
    kStatus,
    kSteps,
    kStepTime,
    kLoss,
    kRanks,
    kEvents,
    kSource,
    kColumnCount
  };
  // The run id of a row, under this role in every column.
  static constexpr int kRunIdRole = Qt::UserRole + 1;

  explicit RunsTableModel(QObject* parent = nullptr);

  // Replaces every row (a model reset: views drop their selection), as when
  // another file is opened.
  void setRows(std::vector<RunRow> rows);
  // Makes the rows `rows` (the open file's runs, in order) without a reset:
  // rows whose run is gone are removed, the others updated in place, new
  // runs appended, so a view keeps its selection on runs that stay.
  void syncRows(const std::vector<RunRow>& rows);
  // Replaces the row with the same id, or appends it.
  void updateRow(const RunRow& row);
  const std::vector<RunRow>& rows() const { return rows_; }
  int rowOfRun(int64_t runId) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  std::vector<RunRow> rows_;
};

}  // namespace bubblescope::gui
