#include "gui/legend_widget.h"

#include <QPainter>

#include "gui/span_palette.h"

namespace bubblescope::gui {

namespace {
constexpr int kSwatch = 11;
constexpr int kLineHeight = 17;
}  // namespace

LegendWidget::LegendWidget(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
}

QSize LegendWidget::sizeHint() const {
  return {800, heightForWidth(800)};
}

int LegendWidget::heightForWidth(int width) const {
  return layoutEntries(width, nullptr);
}

int LegendWidget::layoutEntries(int width, QPainter* p) const {
  const QFontMetrics fm(font());
  int x = 6, y = 3;
  auto place = [&](const QString& label, auto drawSwatch) {
    const int w = kSwatch + 4 + fm.horizontalAdvance(label) + 12;
    if (x + w > width && x > 6) {
      x = 6;
      y += kLineHeight;
    }
    if (p != nullptr) {
      const QRect swatch(x, y + (kLineHeight - kSwatch) / 2, kSwatch, kSwatch);
      drawSwatch(swatch);
      p->setPen(palette().color(QPalette::WindowText));
      p->drawText(QRect(x + kSwatch + 4, y, w, kLineHeight), Qt::AlignVCenter | Qt::AlignLeft,
                  label);
    }
    x += w;
  };
  for (const LegendEntry& e : legendEntries()) {
    // GPU-only and rare kinds would crowd the legend of a CPU run; they keep
    // their colours, and the tooltip names them.
    if (e.kind == trace_model::EventKind::kMemset || e.kind == trace_model::EventKind::kOther)
      continue;
    if (kinds_ != 0 && (kinds_ & (uint32_t{1} << static_cast<int>(e.kind))) == 0) continue;
    // GPU records are painted by kernel category at every zoom (the overview
    // bins them by category too): once any category is shown, the kinds
    // only GPU streams hold give way to the categories.
    if (categories_ != 0 &&
        (e.kind == trace_model::EventKind::kMemcpy || e.kind == trace_model::EventKind::kKernel)) {
      continue;
    }
    place(e.label, [&](const QRect& r) { p->fillRect(r, e.colour); });
  }
  for (int c = 0; c < trace_model::kKernelCategoryCount; ++c) {
    if ((categories_ & (uint32_t{1} << c)) == 0) continue;
    const auto category = static_cast<trace_model::KernelCategory>(c);
    place(tr("GPU %1").arg(labelOf(category)),
          [&](const QRect& r) { p->fillRect(r, colourOf(category)); });
  }
  for (int chunk = 0; chunks_ >= 2 && chunk < chunks_; ++chunk) {
    place(tr("chunk %1").arg(chunk), [&](const QRect& r) {
      const QRect left(r.left(), r.top(), r.width() / 2, r.height());
      p->fillRect(left, chunkShade(colourOf(trace_model::EventKind::kForward), chunk));
      p->fillRect(QRect(left.right() + 1, r.top(), r.width() - left.width(), r.height()),
                  chunkShade(colourOf(trace_model::EventKind::kBackward), chunk));
    });
  }
  place(tr("idle in step (bubble)"), [&](const QRect& r) {
    p->fillRect(r, palette().base());
    p->fillRect(r, QBrush(bubbleHatchColour(), Qt::BDiagPattern));
    p->setPen(bubbleHatchColour());
    p->drawRect(r.adjusted(0, 0, -1, -1));
  });
  const uint32_t transfers = (uint32_t{1} << static_cast<int>(trace_model::EventKind::kSend)) |
                             (uint32_t{1} << static_cast<int>(trace_model::EventKind::kRecv));
  if (kinds_ == 0 || (kinds_ & transfers) != 0) {
    place(tr("send → receive"), [&](const QRect& r) {
      p->setPen(QPen(arrowColour(palette()), 1.5));
      p->drawLine(r.left(), r.center().y(), r.right(), r.center().y());
      p->drawLine(r.right() - 3, r.center().y() - 3, r.right(), r.center().y());
      p->drawLine(r.right() - 3, r.center().y() + 3, r.right(), r.center().y());
    });
  }
  return y + kLineHeight + 3;
}

void LegendWidget::setChunkCount(int chunks) {
  if (chunks == chunks_) return;
  chunks_ = chunks;
  updateGeometry();
  update();
}

void LegendWidget::setKinds(uint32_t kinds) {
  if (kinds == kinds_) return;
  kinds_ = kinds;
  updateGeometry();
  update();
}

void LegendWidget::setKernelCategories(uint32_t categories) {
  if (categories == categories_) return;
  categories_ = categories;
  updateGeometry();
  update();
}

void LegendWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  layoutEntries(width(), &p);
}

}  // namespace bubblescope::gui
