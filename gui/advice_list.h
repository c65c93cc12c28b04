// AdviceList: the advice of one run's RunReport (storage/analysis/advice.h)
// as a table under the charts: rule and dimension, the finding, the layout
// change and its predicted gain.
//
// Contract: shows exactly RunReport::advice (the analysis computed it; no
// analysis here); setAdvice() replaces every row; with no advice one row
// says so. GUI thread only.
#pragma once

#include <QString>
#include <QWidget>
#include <vector>

#include "storage/analysis/advice.h"

class QLabel;
class QTableWidget;

namespace bubblescope::gui {

class AdviceList : public QWidget {
  Q_OBJECT

 public:
  enum Column { kRule, kFinding, kChange, kPredicted, kColumnCount };

  explicit AdviceList(QWidget* parent = nullptr);

  void setAdvice(const std::vector<analysis::Advice>& advice);
  void clear();

  // Rows holding advice (0 when none).
  int count() const { return count_; }
  // The text of a cell (tests, copy).
  QString text(int row, Column column) const;
  QTableWidget* table() const { return table_; }

 private:
  QLabel* title_ = nullptr;
  QTableWidget* table_ = nullptr;
  int count_ = 0;
};

}  // namespace bubblescope::gui
