// CompareView: two runs of the open file side by side (A above B), their
// timelines aligned at a chosen step, and the table of layout and metric
// differences (analysis::compareRuns).
//
// Contract: the reader is not owned and must outlive the view (or clear()).
// Alignment: each timeline starts at the chosen step of its run. In the
// kSameScale mode both show the same duration (the longer of the two step
// times), so equal lengths on screen are equal times; in kFitEach each side
// fits its own step, so a much faster run is not squashed to a sliver.
// setRuns() picks kFitEach when the two step times differ by more than
// kFitEachRatio, else kSameScale. The table's value columns fit their
// contents, its metric names wrap within kMetricColumnPx, and the table takes
// the width they need, the timelines keeping two fifths at least. When that
// is too little (a 1280 px screen), the metric, A and B columns give up width
// (the widest first, to one width, not below kLeastColumnPx) and wrap their
// text, so the "change B vs A" column stays whole in sight.
// GUI thread only.
#pragma once

#include <QWidget>

#include "common/status.h"
#include "gui/compare_table_model.h"
#include "storage/trace_reader.h"

class QComboBox;
class QLabel;
class QSpinBox;
class QSplitter;
class QTableView;

namespace bubblescope::gui {

class TimelinePanel;

class CompareView : public QWidget {
  Q_OBJECT

 public:
  enum class Scale { kSameScale, kFitEach };
  // Step times further apart than this factor open in kFitEach.
  static constexpr double kFitEachRatio = 2.0;
  static constexpr int kMetricColumnPx = 190;
  static constexpr int kLeastColumnPx = 40;  // the narrowest a shared column gets

  explicit CompareView(QWidget* parent = nullptr);

  Status setRuns(storage::TraceReader* reader, int64_t runA, int64_t runB);
  void setReports(const analysis::RunReport& a, const analysis::RunReport& b);
  void setMessage(const QString& text);
  void clear();
  // Aligns both timelines at `step`; false when neither run has it.
  bool alignAtStep(int step);
  // Changes the scale mode and re-aligns at the current step.
  void setScale(Scale scale);
  Scale scale() const;

  int64_t runA() const { return runA_; }
  int64_t runB() const { return runB_; }
  TimelinePanel* panelA() const { return a_; }
  TimelinePanel* panelB() const { return b_; }
  CompareTableModel* table() const { return table_; }
  QTableView* tableView() const { return tableView_; }

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  // Gives the table the width its columns need, keeping the timelines at
  // least two fifths (and 400 px while the table keeps half); then fits the
  // columns (fitColumns).
  void fitTableWidth();
  // Columns at their contents' width (the metric's at most kMetricColumnPx),
  // then the metric, A and B columns narrowed (widest first) to the room the
  // change column leaves in the viewport; rows sized to their wrapped text.
  void fitColumns();
  int fittedWidth_ = -1;  // the viewport width fitColumns() last fitted

  TimelinePanel* a_ = nullptr;
  TimelinePanel* b_ = nullptr;
  QLabel* titleA_ = nullptr;
  QLabel* titleB_ = nullptr;
  QLabel* message_ = nullptr;
  QSpinBox* step_ = nullptr;
  QComboBox* scale_ = nullptr;
  QSplitter* split_ = nullptr;
  CompareTableModel* table_ = nullptr;
  QTableView* tableView_ = nullptr;
  int64_t runA_ = 0, runB_ = 0;
};

}  // namespace bubblescope::gui
