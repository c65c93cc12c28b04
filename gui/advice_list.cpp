#include "gui/advice_list.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

namespace bubblescope::gui {
namespace {

QTableWidgetItem* cell(const QString& text, const QString& tip = QString()) {
  auto* item = new QTableWidgetItem(text);
  item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
  item->setToolTip(tip.isEmpty() ? text : tip);
  return item;
}

}  // namespace

AdviceList::AdviceList(QWidget* parent) : QWidget(parent) {
  setObjectName("advice");
  title_ = new QLabel(tr("<b>Advice</b> · layout changes with gains predicted from this run's "
                         "own calibration (docs/analysis.md, \"Advice\")"),
                      this);
  table_ = new QTableWidget(0, kColumnCount, this);
  // "predicted" from the run's own costs: not the layout editor's prediction,
  // whose costs the planner chooses (often the FLOPs estimate).
  table_->setHorizontalHeaderLabels(
      {tr("rule"), tr("finding"), tr("change"), tr("predicted from this run's costs")});
  table_->verticalHeader()->hide();
  table_->setWordWrap(true);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  QHeaderView* header = table_->horizontalHeader();
  header->setSectionResizeMode(kRule, QHeaderView::ResizeToContents);
  header->setSectionResizeMode(kFinding, QHeaderView::Stretch);
  header->setSectionResizeMode(kChange, QHeaderView::Interactive);
  header->setSectionResizeMode(kPredicted, QHeaderView::Stretch);
  header->resizeSection(kChange, 220);
  // Wrapped rows take their height from the column widths they get
  // (queued: the header settles its stretched sections after the resize).
  connect(
      header, &QHeaderView::sectionResized, table_, [this] { table_->resizeRowsToContents(); },
      Qt::QueuedConnection);
  table_->setMinimumHeight(fontMetrics().lineSpacing() * 7);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 2, 4, 2);
  layout->addWidget(title_);
  layout->addWidget(table_);
  clear();
}

void AdviceList::clear() {
  setAdvice({});
}

void AdviceList::setAdvice(const std::vector<analysis::Advice>& advice) {
  count_ = static_cast<int>(advice.size());
  table_->clearContents();
  table_->setRowCount(std::max(count_, 1));
  if (advice.empty()) {
    table_->setItem(0, kRule, cell(tr("none")));
    table_->setItem(0, kFinding, cell(tr("no rule fires on this run")));
    table_->setItem(0, kChange, cell(QString()));
    table_->setItem(0, kPredicted, cell(QString()));
  }
  for (int row = 0; row < count_; ++row) {
    const analysis::Advice& a = advice[row];
    QString rule = QString::fromStdString(a.rule);
    if (!a.dimension.empty()) rule += " (" + QString::fromStdString(a.dimension) + ")";
    table_->setItem(row, kRule, cell(rule));
    table_->setItem(row, kFinding, cell(QString::fromStdString(a.message)));
    table_->setItem(row, kChange,
                    a.change.empty()
                        ? cell(tr("-"), tr("no nearby layout is predicted at least 2% faster, or "
                                           "the run has no calibration (see the notes)"))
                        : cell(QString::fromStdString(a.change)));
    table_->setItem(row, kPredicted, cell(QString::fromStdString(a.predictedText())));
  }
  table_->resizeRowsToContents();
}

QString AdviceList::text(int row, Column column) const {
  const QTableWidgetItem* item = table_->item(row, column);
  return item ? item->text() : QString();
}

}  // namespace bubblescope::gui
