#include "gui/expert_load_view.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>
#include <cmath>

namespace bubblescope::gui {
namespace {

constexpr QRgb kCold = 0x2166ac, kFair = 0xf7f7f7, kHot = 0xb2182b;

QColor mix(QRgb a, QRgb b, double t) {
  t = std::clamp(t, 0.0, 1.0);
  auto channel = [t](int x, int y) { return static_cast<int>(std::lround(x + (y - x) * t)); };
  return QColor(channel(qRed(a), qRed(b)), channel(qGreen(a), qGreen(b)),
                channel(qBlue(a), qBlue(b)));
}

}  // namespace

ExpertLoadView::ExpertLoadView(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Minimum);
}

void ExpertLoadView::setModel(const ExpertLoadModel* model) {
  model_ = model;
  modelChanged();
}

void ExpertLoadView::modelChanged() {
  updateGeometry();
  update();
}

QColor ExpertLoadView::loadColour(double relativeLoad, double scaleMax) {
  if (relativeLoad <= 1.0) return mix(kCold, kFair, relativeLoad);
  return mix(kFair, kHot, (relativeLoad - 1.0) / std::max(1e-9, scaleMax - 1.0));
}

int ExpertLoadView::cellWidth(size_t block) const {
  const int steps = std::max(1, model_->steps(block));
  return std::clamp((width() - 2 * kMargin - kLabelWidth) / steps, 2, 40);
}

int ExpertLoadView::cellHeight(size_t block) const {
  const int experts = std::max(1, model_->experts(block));
  return experts <= 16 ? 14 : std::max(4, 224 / experts);
}

int ExpertLoadView::blockTop(size_t block) const {
  int y = kMargin;
  for (size_t b = 0; b < block; ++b)
    y += kTitleHeight + model_->experts(b) * cellHeight(b) + kAxisHeight + kBlockGap;
  return y + kTitleHeight;
}

int ExpertLoadView::contentHeight() const {
  if (model_ == nullptr || model_->empty()) return 2 * kMargin + kTitleHeight;
  const size_t last = model_->blocks().size() - 1;
  return blockTop(last) + model_->experts(last) * cellHeight(last) + kAxisHeight + kBlockGap +
         kBarHeight + kAxisHeight + kMargin;
}

QSize ExpertLoadView::sizeHint() const {
  return {260, contentHeight()};
}

QRect ExpertLoadView::cellRect(size_t block, int32_t expert, int32_t step) const {
  if (model_ == nullptr || block >= model_->blocks().size() || expert < 0 || step < 0 ||
      expert >= model_->experts(block) || step >= model_->steps(block))
    return {};
  const int w = cellWidth(block), h = cellHeight(block);
  return {kMargin + kLabelWidth + step * w, blockTop(block) + expert * h, w, h};
}

std::optional<ExpertLoadView::Hit> ExpertLoadView::cellAt(QPoint p) const {
  if (model_ == nullptr) return std::nullopt;
  for (size_t b = 0; b < model_->blocks().size(); ++b) {
    const int w = cellWidth(b), h = cellHeight(b);
    const int x = p.x() - kMargin - kLabelWidth, y = p.y() - blockTop(b);
    if (x < 0 || y < 0) continue;
    const int step = x / w, expert = y / h;
    if (step < model_->steps(b) && expert < model_->experts(b))
      return Hit{b, static_cast<int32_t>(expert), static_cast<int32_t>(step)};
  }
  return std::nullopt;
}

void ExpertLoadView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().color(QPalette::Base));
  p.setPen(palette().color(QPalette::Text));
  if (model_ == nullptr || model_->empty()) {
    p.drawText(rect().adjusted(kMargin, kMargin, -kMargin, -kMargin), Qt::TextWordWrap,
               tr("No mixture-of-experts samples in this run."));
    return;
  }
  const QColor grid = palette().color(QPalette::Mid);
  const QColor empty = palette().color(QPalette::AlternateBase);
  for (size_t b = 0; b < model_->blocks().size(); ++b) {
    const auto& l = model_->blocks()[b];
    const int top = blockTop(b), w = cellWidth(b), h = cellHeight(b);
    p.setPen(palette().color(QPalette::Text));
    p.drawText(QRect(kMargin, top - kTitleHeight, width() - 2 * kMargin, kTitleHeight),
               Qt::AlignLeft | Qt::AlignVCenter,
               tr("MoE h.%1: max/mean %2, drop %3%")
                   .arg(l.block)
                   .arg(l.imbalanceMean, 0, 'f', 2)
                   .arg(100.0 * l.dropRate().value_or(0.0), 0, 'f', 1));
    const int labelEvery = std::max(1, (12 + h - 1) / h);
    for (int32_t e = 0; e < l.experts; ++e) {
      if (e % labelEvery == 0) {
        p.setPen(palette().color(QPalette::Text));
        p.drawText(QRect(kMargin, top + e * h, kLabelWidth - 4, std::max(h, 12)),
                   Qt::AlignRight | Qt::AlignTop, QStringLiteral("e%1").arg(e));
      }
      for (int32_t s = 0; s < model_->steps(b); ++s) {
        const QRect r = cellRect(b, e, s);
        const auto c = model_->cell(b, e, s);
        p.fillRect(r, c ? loadColour(c->relativeLoad, model_->scaleMax()) : empty);
        if (c && c->dropped > 0) {  // a dark corner: this expert dropped assignments
          const int k = std::max(3, std::min(r.width(), r.height()) / 2);
          const QPoint corner = r.topRight() + QPoint(1, 0);
          const QPolygon tri({corner, corner - QPoint(k, 0), corner + QPoint(0, k)});
          p.setPen(Qt::NoPen);
          p.setBrush(QColor(0x21, 0x21, 0x21));
          p.drawPolygon(tri);
        }
      }
    }
    p.setPen(grid);
    p.setBrush(Qt::NoBrush);
    p.drawRect(QRect(kMargin + kLabelWidth, top, w * model_->steps(b), h * l.experts));
    p.setPen(palette().color(QPalette::Text));
    const int stepEvery = std::max(1, (28 + w - 1) / w);
    for (int32_t s = 0; s < model_->steps(b); s += stepEvery) {
      p.drawText(QRect(kMargin + kLabelWidth + s * w, top + h * l.experts, 28, kAxisHeight),
                 Qt::AlignLeft | Qt::AlignVCenter, QString::number(s));
    }
  }
  // The colour bar: relative load 0 .. scaleMax.
  const int barTop = contentHeight() - kMargin - kAxisHeight - kBarHeight;
  const int barLeft = kMargin + kLabelWidth, barWidth = std::max(40, width() - barLeft - kMargin);
  for (int x = 0; x < barWidth; ++x) {
    const double v = model_->scaleMax() * x / std::max(1, barWidth - 1);
    p.fillRect(QRect(barLeft + x, barTop, 1, kBarHeight), loadColour(v, model_->scaleMax()));
  }
  p.setPen(palette().color(QPalette::Text));
  const QRect labels(barLeft, barTop + kBarHeight, barWidth, kAxisHeight);
  p.drawText(QRect(kMargin, barTop - 2, kLabelWidth, kBarHeight + 4), Qt::AlignLeft, tr("load"));
  p.drawText(labels, Qt::AlignLeft | Qt::AlignVCenter, QStringLiteral("0"));
  const int fairX = static_cast<int>(barWidth / model_->scaleMax());
  p.drawText(QRect(barLeft + fairX - 30, labels.top(), 60, kAxisHeight), Qt::AlignCenter,
             tr("1 = mean"));
  p.drawText(labels, Qt::AlignRight | Qt::AlignVCenter,
             QStringLiteral("%1×").arg(model_->scaleMax(), 0, 'f', 2));
}

void ExpertLoadView::mousePressEvent(QMouseEvent* event) {
  const auto hit = cellAt(event->position().toPoint());
  if (hit) emit stepClicked(model_->stepTimeNs(hit->block, hit->step));
}

bool ExpertLoadView::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const auto hit = cellAt(help->pos());
    if (hit) {
      QToolTip::showText(help->globalPos(), model_->cellText(hit->block, hit->expert, hit->step),
                         this);
    } else {
      QToolTip::hideText();
    }
    return true;
  }
  return QWidget::event(event);
}

}  // namespace bubblescope::gui
