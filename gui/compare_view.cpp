#include "gui/compare_view.h"

#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QScrollBar>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>
#include <array>

#include "gui/run_rows.h"
#include "gui/time_format.h"
#include "gui/timeline_panel.h"

namespace bubblescope::gui {

namespace {

const trace_model::StepWindow* findStep(TimelinePanel* panel, int step) {
  for (const trace_model::StepWindow& w : panel->model()->steps()) {
    if (w.step == step) return &w;
  }
  return nullptr;
}

}  // namespace

CompareView::CompareView(QWidget* parent) : QWidget(parent) {
  a_ = new TimelinePanel(this);
  b_ = new TimelinePanel(this);
  // No detail panel beside either timeline: the side column that holds it
  // (and a MoE run's expert load) is hidden too, or it stays as a blank
  // strip that narrows the timelines.
  for (TimelinePanel* p : {a_, b_}) {
    p->details()->hide();
    p->details()->parentWidget()->hide();
  }
  b_->setLegendVisible(false);  // A's legend serves both
  titleA_ = new QLabel(this);
  titleB_ = new QLabel(this);
  message_ = new QLabel(this);
  message_->setWordWrap(true);  // a long message does not widen the timelines' column
  step_ = new QSpinBox(this);
  step_->setObjectName("alignStep");
  step_->setRange(0, 1000000);
  step_->setPrefix(tr("align at step "));
  scale_ = new QComboBox(this);
  scale_->setObjectName("compareScale");
  scale_->addItem(tr("same time scale"), static_cast<int>(Scale::kSameScale));
  scale_->addItem(tr("each side fits its own step"), static_cast<int>(Scale::kFitEach));
  table_ = new CompareTableModel(this);
  tableView_ = new QTableView(this);
  tableView_->setModel(table_);
  tableView_->verticalHeader()->hide();
  // The metric names wrap in a column of at most kMetricColumnPx; the
  // values take their width; no column stretches into a blank.
  // Sized by setReports() (resizeColumnsToContents, then fitTableWidth()).
  tableView_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
  tableView_->setWordWrap(true);
  tableView_->setAlternatingRowColors(true);
  tableView_->setSelectionBehavior(QAbstractItemView::SelectRows);
  tableView_->viewport()->installEventFilter(this);

  auto* timelines = new QWidget(this);
  auto* column = new QVBoxLayout(timelines);
  column->setContentsMargins(0, 0, 0, 0);
  auto* bar = new QHBoxLayout;
  bar->addWidget(step_);
  bar->addWidget(scale_);
  bar->addWidget(message_, 1);
  column->addLayout(bar);
  column->addWidget(titleA_);
  column->addWidget(a_, 1);
  column->addWidget(titleB_);
  column->addWidget(b_, 1);

  split_ = new QSplitter(Qt::Horizontal, this);
  split_->addWidget(timelines);
  split_->addWidget(tableView_);
  split_->setStretchFactor(0, 3);
  split_->setStretchFactor(1, 2);
  split_->setSizes({700, 480});
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(split_);

  connect(step_, &QSpinBox::valueChanged, this, [this](int s) { alignAtStep(s); });
  connect(scale_, &QComboBox::currentIndexChanged, this, [this] { alignAtStep(step_->value()); });
}

Status CompareView::setRuns(storage::TraceReader* reader, int64_t runA, int64_t runB) {
  BS_RETURN_IF_ERROR(a_->showRun(reader, runA));
  BS_RETURN_IF_ERROR(b_->showRun(reader, runB));
  runA_ = runA;
  runB_ = runB;
  auto title = [&](const char* side, TimelinePanel* p) {
    const storage::RunRecord& r = p->model()->run();
    return tr("<b>%1 · run %2</b> · %3 · %4")
        .arg(QString::fromLatin1(side))
        .arg(r.id)
        .arg(layoutSummary(r.info).toHtmlEscaped())
        .arg(healthText(r.health));
  };
  titleA_->setText(title("A", a_));
  titleB_->setText(title("B", b_));
  table_->clear();
  // Align at the second step when there is one (the first includes warm-up).
  int step = -1;
  for (const trace_model::StepWindow& w : a_->model()->steps()) {
    if (findStep(b_, w.step) != nullptr && (step < 0 || w.step <= 1)) step = w.step;
  }
  if (step >= 0) {
    const trace_model::StepWindow* wa = findStep(a_, step);
    const trace_model::StepWindow* wb = findStep(b_, step);
    const double la = static_cast<double>(wa->endNs - wa->startNs);
    const double lb = static_cast<double>(wb->endNs - wb->startNs);
    const bool apart = std::min(la, lb) > 0 && std::max(la, lb) > kFitEachRatio * std::min(la, lb);
    const QSignalBlocker blockScale(scale_);
    scale_->setCurrentIndex(
        scale_->findData(static_cast<int>(apart ? Scale::kFitEach : Scale::kSameScale)));
    const QSignalBlocker block(step_);
    step_->setValue(step);
    alignAtStep(step);
  }
  return Status::ok();
}

void CompareView::setReports(const analysis::RunReport& a, const analysis::RunReport& b) {
  table_->setReports(a, b);
  tableView_->resizeColumnsToContents();
  tableView_->setColumnWidth(0, std::min(tableView_->columnWidth(0), kMetricColumnPx));
  tableView_->resizeRowsToContents();
  fitTableWidth();
  message_->clear();
}

void CompareView::fitTableWidth() {
  const QHeaderView* header = tableView_->horizontalHeader();
  const QAbstractItemView* view = tableView_;  // sizeHintForColumn is public here
  // The frame, the vertical scroll bar and a few pixels of the splitter's
  // rounding.
  int needed =
      2 * tableView_->frameWidth() + tableView_->verticalScrollBar()->sizeHint().width() + 8;
  for (int c = 0; c < header->count(); ++c) {
    needed += c == 0 ? header->sectionSize(0)
                     : std::max(view->sizeHintForColumn(c), header->sectionSizeHint(c));
  }
  const QList<int> sizes = split_->sizes();
  const int total = sizes.value(0) + sizes.value(1);
  if (total <= 0) return;
  // The timelines keep two fifths at least (the table scrolls sideways
  // beyond), and 400 px while the table can keep half.
  const int minTimelines = std::max(std::min(400, total / 2), total * 2 / 5);
  const int table = std::min(needed, total - minTimelines);
  split_->setSizes({total - table, table});
  fitColumns();
}

void CompareView::fitColumns() {
  fittedWidth_ = tableView_->viewport()->width();
  tableView_->resizeColumnsToContents();
  tableView_->setColumnWidth(0, std::min(tableView_->columnWidth(0), kMetricColumnPx));
  // Short of room (issue 31 walk: at 1280 px "change B vs A" was half off
  // screen): the metric, A and B columns share what the change column
  // leaves, the widest narrowing first to one width, and wrap their text.
  const int room = fittedWidth_ - tableView_->columnWidth(CompareTableModel::kChange);
  const std::array<int, 3> shared{CompareTableModel::kMetric, CompareTableModel::kA,
                                  CompareTableModel::kB};
  std::array<int, 3> widths{};
  int sum = 0;
  for (size_t i = 0; i < shared.size(); ++i) sum += widths[i] = tableView_->columnWidth(shared[i]);
  if (sum > room) {
    std::array<int, 3> sorted = widths;
    std::sort(sorted.begin(), sorted.end());
    int below = 0, cap = sorted.back();
    for (size_t k = 0; k < sorted.size(); ++k) {
      const int w = (room - below) / static_cast<int>(sorted.size() - k);
      if (w < sorted[k]) {
        cap = w;
        break;
      }
      below += sorted[k];
    }
    cap = std::max(cap, kLeastColumnPx);
    for (size_t i = 0; i < shared.size(); ++i) {
      if (widths[i] > cap) tableView_->setColumnWidth(shared[i], cap);
    }
  }
  tableView_->resizeRowsToContents();
}

bool CompareView::eventFilter(QObject* watched, QEvent* event) {
  // The table's width changed (the window, the splitter): refit its columns,
  // once per width (wrapped rows may show or hide the scroll bar).
  if (watched == tableView_->viewport() && event->type() == QEvent::Resize &&
      tableView_->viewport()->width() != fittedWidth_ && table_->rowCount() > 0) {
    fitColumns();
  }
  return QWidget::eventFilter(watched, event);
}

CompareView::Scale CompareView::scale() const {
  return static_cast<Scale>(scale_->currentData().toInt());
}

void CompareView::setScale(Scale scale) {
  scale_->setCurrentIndex(scale_->findData(static_cast<int>(scale)));
}

void CompareView::setMessage(const QString& text) {
  message_->setText(text);
}

void CompareView::clear() {
  a_->clear();
  b_->clear();
  table_->clear();
  runA_ = runB_ = 0;
}

bool CompareView::alignAtStep(int step) {
  if (step_->value() != step) {
    const QSignalBlocker block(step_);
    step_->setValue(step);
  }
  const trace_model::StepWindow* wa = findStep(a_, step);
  const trace_model::StepWindow* wb = findStep(b_, step);
  if (wa == nullptr && wb == nullptr) {
    message_->setText(tr("neither run has step %1").arg(step));
    return false;
  }
  const int64_t longer =
      std::max(wa ? wa->endNs - wa->startNs : 0, wb ? wb->endNs - wb->startNs : 0);
  const bool fitEach = scale() == Scale::kFitEach;
  for (auto [panel, w] : {std::pair{a_, wa}, std::pair{b_, wb}}) {
    if (w == nullptr) continue;
    const int64_t length = fitEach ? w->endNs - w->startNs : longer;
    const double pad = length * 0.02;
    panel->view()->setFollowing(false);
    panel->view()->setViewRange(w->startNs - pad, w->startNs + length + pad);
  }
  if (!(wa && wb)) {
    message_->setText(tr("only run %1 has step %2").arg(wa ? runA_ : runB_).arg(step));
  } else if (fitEach) {
    message_->setText(tr("each timeline fits its own step %1 (A %2, B %3): lengths on screen "
                         "differ in time")
                          .arg(step)
                          .arg(formatDuration(double(wa->endNs - wa->startNs)))
                          .arg(formatDuration(double(wb->endNs - wb->startNs))));
  } else {
    message_->setText(tr("both timelines show %1 from the start of step %2")
                          .arg(formatDuration(double(longer)))
                          .arg(step));
  }
  return true;
}

}  // namespace bubblescope::gui
