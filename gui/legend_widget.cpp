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

namespace {

// One swatch: a flat colour, a chunk's two shades, the bubble hatch or the
// send -> receive arrow.
struct Item {
  enum class Swatch { kFlat, kChunk, kHatch, kArrow };
  QString label;
  QColor colour;  // kFlat only
  Swatch swatch = Swatch::kFlat;
  int chunk = 0;
};

std::vector<Item> itemsOf(uint32_t kinds, uint32_t kindsOffGpu, uint32_t categories, int chunks,
                          bool hasSteps) {
  using trace_model::EventKind;
  std::vector<Item> items;
  std::vector<bool> categoryTaken(trace_model::kKernelCategoryCount, false);
  for (const LegendEntry& e : legendEntries()) {
    // GPU-only kinds would crowd the legend of a CPU run; they keep their
    // colours, and the tooltip names them.
    if (e.kind == EventKind::kMemset) continue;
    const uint32_t bit = uint32_t{1} << static_cast<int>(e.kind);
    // "Other" is an imported trace's host ops and API calls (most of its CPU
    // lanes' grey): listed when the run has some off the GPU streams, not
    // before a run is known.
    if (e.kind == EventKind::kOther && (kinds == 0 || (kinds & kindsOffGpu & bit) == 0)) continue;
    if (kinds != 0 && (kinds & bit) == 0) continue;
    // GPU records are painted by kernel category at every zoom (the overview
    // bins them by category too): once any category is shown, the kinds
    // only GPU streams hold give way to the categories.
    if (categories != 0 && (e.kind == EventKind::kMemcpy || e.kind == EventKind::kKernel ||
                            (kindsOffGpu & bit) == 0)) {
      continue;
    }
    Item item{
        e.kind == EventKind::kOther ? LegendWidget::tr("other (host ops, API calls)") : e.label,
        e.colour};
    // A shown category of the same colour (a collective's kind and its GPU
    // category) shares the swatch: one colour, one entry.
    for (int c = 0; c < trace_model::kKernelCategoryCount; ++c) {
      if ((categories & (uint32_t{1} << c)) == 0 || categoryTaken[c]) continue;
      const auto category = static_cast<trace_model::KernelCategory>(c);
      if (colourOf(category).rgb() != e.colour.rgb()) continue;
      categoryTaken[c] = true;
      item.label = labelOf(category) == e.label
                       ? LegendWidget::tr("%1 (CPU and GPU)").arg(e.label)
                       : LegendWidget::tr("%1 · GPU %2").arg(e.label, labelOf(category));
    }
    items.push_back(std::move(item));
  }
  for (int c = 0; c < trace_model::kKernelCategoryCount; ++c) {
    if ((categories & (uint32_t{1} << c)) == 0 || categoryTaken[c]) continue;
    const auto category = static_cast<trace_model::KernelCategory>(c);
    items.push_back({LegendWidget::tr("GPU %1").arg(labelOf(category)), colourOf(category)});
  }
  for (int chunk = 0; chunks >= 2 && chunk < chunks; ++chunk) {
    items.push_back({LegendWidget::tr("chunk %1").arg(chunk), {}, Item::Swatch::kChunk, chunk});
  }
  if (hasSteps) {  // the timeline hatches idle time inside steps only
    items.push_back({LegendWidget::tr("idle in step (bubble)"), {}, Item::Swatch::kHatch});
  }
  const uint32_t transfers = (uint32_t{1} << static_cast<int>(EventKind::kSend)) |
                             (uint32_t{1} << static_cast<int>(EventKind::kRecv));
  if (kinds == 0 || (kinds & transfers) != 0) {
    items.push_back({LegendWidget::tr("send → receive"), {}, Item::Swatch::kArrow});
  }
  return items;
}

}  // namespace

std::vector<LegendWidget::Entry> LegendWidget::entries() const {
  std::vector<Entry> out;
  for (const Item& item : itemsOf(kinds_, kindsOffGpu_, categories_, chunks_, hasSteps_)) {
    out.push_back({item.label, item.colour});
  }
  return out;
}

int LegendWidget::layoutEntries(int width, QPainter* p) const {
  const QFontMetrics fm(font());
  int x = 6, y = 3;
  for (const Item& item : itemsOf(kinds_, kindsOffGpu_, categories_, chunks_, hasSteps_)) {
    const int w = kSwatch + 4 + fm.horizontalAdvance(item.label) + 12;
    if (x + w > width && x > 6) {
      x = 6;
      y += kLineHeight;
    }
    if (p != nullptr) {
      const QRect r(x, y + (kLineHeight - kSwatch) / 2, kSwatch, kSwatch);
      switch (item.swatch) {
        case Item::Swatch::kFlat:
          p->fillRect(r, item.colour);
          break;
        case Item::Swatch::kChunk: {
          const QRect left(r.left(), r.top(), r.width() / 2, r.height());
          p->fillRect(left, chunkShade(colourOf(trace_model::EventKind::kForward), item.chunk));
          p->fillRect(QRect(left.right() + 1, r.top(), r.width() - left.width(), r.height()),
                      chunkShade(colourOf(trace_model::EventKind::kBackward), item.chunk));
          break;
        }
        case Item::Swatch::kHatch:
          p->fillRect(r, palette().base());
          p->fillRect(r, QBrush(bubbleHatchColour(), Qt::BDiagPattern));
          p->setPen(bubbleHatchColour());
          p->drawRect(r.adjusted(0, 0, -1, -1));
          break;
        case Item::Swatch::kArrow:
          p->setPen(QPen(arrowColour(palette()), 1.5));
          p->drawLine(r.left(), r.center().y(), r.right(), r.center().y());
          p->drawLine(r.right() - 3, r.center().y() - 3, r.right(), r.center().y());
          p->drawLine(r.right() - 3, r.center().y() + 3, r.right(), r.center().y());
          break;
      }
      p->setPen(palette().color(QPalette::WindowText));
      p->drawText(QRect(x + kSwatch + 4, y, w, kLineHeight), Qt::AlignVCenter | Qt::AlignLeft,
                  item.label);
    }
    x += w;
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

void LegendWidget::setKindsOffGpu(uint32_t kinds) {
  if (kinds == kindsOffGpu_) return;
  kindsOffGpu_ = kinds;
  updateGeometry();
  update();
}

void LegendWidget::setHasSteps(bool hasSteps) {
  if (hasSteps == hasSteps_) return;
  hasSteps_ = hasSteps;
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
