#include "gui/planner_page.h"

#include <QEvent>
#include <QFontMetrics>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>
#include <vector>

namespace bubblescope::gui {
namespace {

// Refits a candidates table's columns when its viewport's width changes.
class ColumnFitter : public QObject {
 public:
  explicit ColumnFitter(QTableView* table) : QObject(table), table_(table) {
    table->viewport()->installEventFilter(this);
  }
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (event->type() == QEvent::Resize && !fitting_) {
      const int width = table_->viewport()->width();
      if (width != lastWidth_) {
        lastWidth_ = width;
        fitting_ = true;  // row heights may show a scroll bar: one refit per width
        fitCandidateColumns(table_);
        fitting_ = false;
      }
    }
    return QObject::eventFilter(watched, event);
  }

 private:
  QTableView* table_;
  int lastWidth_ = -1;
  bool fitting_ = false;
};

// The widest word of a column's cells plus the cell's padding: narrower,
// a number would be elided or a word broken.
int leastWidthOf(const QTableView* table, int column) {
  constexpr int kPaddingPx = 12;
  const QAbstractItemModel* model = table->model();
  const QFontMetrics metrics = table->fontMetrics();
  int widest = 0;
  for (int row = 0; row < model->rowCount(); ++row) {
    const QString text = model->index(row, column).data().toString();
    for (const QString& word : text.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
      widest = std::max(widest, metrics.horizontalAdvance(word));
    }
  }
  return std::max(widest + kPaddingPx, kLeastColumnPx);
}

}  // namespace

void fitCandidateColumns(QTableView* table) {
  QHeaderView* header = table->horizontalHeader();
  table->resizeColumnsToContents();
  const int room = table->viewport()->width();
  const int n = header->count();
  std::vector<int> widths(n), least(n);
  int total = 0;
  for (int c = 0; c < n; ++c) total += widths[c] = table->columnWidth(c);
  if (n > 0 && room > 0 && total > room) {
    // The largest common width cap with sum(max(least, min(width, cap)))
    // <= room (issue 31 walk: Memory, Why and Limited by were off to the
    // right at 1280 px); no column below its widest word.
    for (int c = 0; c < n; ++c) least[c] = std::min(leastWidthOf(table, c), widths[c]);
    auto fitted = [&](int cap) {
      int sum = 0;
      for (int c = 0; c < n; ++c) sum += std::max(least[c], std::min(widths[c], cap));
      return sum;
    };
    int lo = 0, hi = *std::max_element(widths.begin(), widths.end());
    while (lo < hi) {  // the largest cap that fits (0 when none does)
      const int mid = (lo + hi + 1) / 2;
      if (fitted(mid) <= room) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    for (int c = 0; c < n; ++c) {
      const int w = std::max(least[c], std::min(widths[c], lo));
      if (w != widths[c]) table->setColumnWidth(c, w);
    }
  }
  table->resizeRowsToContents();
}


QTableView* makeCandidatesTable(QWidget* page, QAbstractItemModel* model, const char* objectName) {
  auto* table = new QTableView(page);
  table->setObjectName(objectName);
  table->setModel(model);
  table->setSelectionBehavior(QAbstractItemView::SelectRows);
  table->setSelectionMode(QAbstractItemView::SingleSelection);
  table->verticalHeader()->hide();
  table->horizontalHeader()->setStretchLastSection(true);
  table->setAlternatingRowColors(true);
  table->setWordWrap(true);  // a narrowed column wraps its text
  new ColumnFitter(table);
  return table;
}

QLabel* makePlanStatus(QWidget* page) {
  auto* status = new QLabel(page);
  status->setObjectName("planStatus");
  status->setWordWrap(true);
  return status;
}

void layOutPlannerPage(QWidget* page, QFormLayout* form, QLabel* status, QTableView* table) {
  auto* results = new QVBoxLayout;
  results->addWidget(status);
  results->addWidget(table, 1);
  auto* inputs = new QWidget(page);
  auto* inputsColumn = new QVBoxLayout(inputs);
  inputsColumn->setContentsMargins(0, 0, 0, 0);
  inputsColumn->addLayout(form);
  inputsColumn->addStretch(1);
  inputs->setMaximumWidth(kPlannerInputsMaxWidth);
  auto* row = new QHBoxLayout(page);
  row->addWidget(inputs);
  row->addLayout(results, 1);
}

}  // namespace bubblescope::gui
