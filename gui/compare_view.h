// CompareView: two runs of the open file side by side (A above B), their
// timelines aligned at a chosen step, and the table of layout and metric
// differences (analysis::compareRuns).
//
// Contract: the reader is not owned and must outlive the view (or clear()).
// Alignment: both timelines show the same duration from the start of the
// chosen step in each run (the longer of the two step times), so equal
// lengths on screen are equal times. GUI thread only.
#pragma once

#include <QWidget>

#include "common/status.h"
#include "gui/compare_table_model.h"
#include "storage/trace_reader.h"

class QLabel;
class QSpinBox;
class QTableView;

namespace bubblescope::gui {

class TimelinePanel;

class CompareView : public QWidget {
  Q_OBJECT

 public:
  explicit CompareView(QWidget* parent = nullptr);

  Status setRuns(storage::TraceReader* reader, int64_t runA, int64_t runB);
  void setReports(const analysis::RunReport& a, const analysis::RunReport& b);
  void setMessage(const QString& text);
  void clear();
  // Aligns both timelines at `step`; false when neither run has it.
  bool alignAtStep(int step);

  int64_t runA() const { return runA_; }
  int64_t runB() const { return runB_; }
  TimelinePanel* panelA() const { return a_; }
  TimelinePanel* panelB() const { return b_; }
  CompareTableModel* table() const { return table_; }

 private:
  TimelinePanel* a_ = nullptr;
  TimelinePanel* b_ = nullptr;
  QLabel* titleA_ = nullptr;
  QLabel* titleB_ = nullptr;
  QLabel* message_ = nullptr;
  QSpinBox* step_ = nullptr;
  CompareTableModel* table_ = nullptr;
  QTableView* tableView_ = nullptr;
  int64_t runA_ = 0, runB_ = 0;
};

}  // namespace bubblescope::gui
