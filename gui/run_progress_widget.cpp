#include "gui/run_progress_widget.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>

namespace bubblescope::gui {

RunProgressWidget::RunProgressWidget(QWidget* parent) : QWidget(parent) {
  bar_ = new QProgressBar(this);
  bar_->setMaximumWidth(180);
  bar_->setTextVisible(false);
  label_ = new QLabel(this);
  stop_ = new QPushButton(tr("Stop"), this);
  stop_->setObjectName("stopRun");
  stop_->setToolTip(tr("Stop the run (Ctrl+.)"));
  auto* row = new QHBoxLayout(this);
  row->setContentsMargins(0, 0, 0, 0);
  row->addWidget(label_);
  row->addWidget(bar_);
  row->addWidget(stop_);
  connect(stop_, &QPushButton::clicked, this, &RunProgressWidget::stopRequested);
  hide();
}

void RunProgressWidget::started(int steps) {
  last_.reset();
  bar_->setRange(0, std::max(steps, 1));
  bar_->setValue(0);
  bar_->show();
  stop_->show();
  stop_->setEnabled(true);
  label_->setText(tr("starting…"));
  show();
}

void RunProgressWidget::addOutputLine(const QString& line) {
  const auto p = parseProgressLine(line);
  if (!p) return;
  last_ = p;
  bar_->setRange(0, std::max(p->steps, 1));
  bar_->setValue(std::min(p->step, p->steps));
  label_->setText(progressText(*p));
}

void RunProgressWidget::ended(bool ok, const QString& message) {
  endWith(ok ? tr("run finished") : tr("run failed"), message);
}

void RunProgressWidget::stopped() {
  endWith(tr("run stopped"), {});
}

void RunProgressWidget::endWith(const QString& head, const QString& message) {
  bar_->hide();
  stop_->hide();
  QString text = head;
  if (last_) text += QStringLiteral(" · ") + progressText(*last_);
  if (!message.isEmpty()) text += QStringLiteral(" · ") + message.section('\n', -1).trimmed();
  label_->setText(text);
}

QString RunProgressWidget::text() const {
  return label_->text();
}

}  // namespace bubblescope::gui
