#include "gui/timeline_export.h"

#include <QPainter>
#include <algorithm>

#include "gui/legend_widget.h"
#include "gui/timeline_view.h"
#include "gui/widget_export.h"

namespace bubblescope::gui {

namespace {

constexpr int kTitlePadding = 8;
constexpr int kBelowRows = 6;  // pixels kept under the last row

QFont titleFont(const QWidget* view) {
  QFont f = view->font();
  f.setBold(true);
  return f;
}

struct PictureLayout {
  int titleHeight = 0;
  int legendHeight = 0;
  int viewHeight = 0;  // the view's ruler and rows, down to the last row
  int height() const { return titleHeight + legendHeight + viewHeight; }
};

// The legend as the view would show it, as wide as the view.
void matchLegend(LegendWidget& legend, const TimelineView* view) {
  legend.setPalette(view->palette());
  legend.setFont(view->font());
  legend.setChunkCount(view->model() != nullptr ? view->model()->chunkCount() : 0);
  legend.setKernelCategories(view->model() != nullptr ? view->model()->kernelCategories() : 0);
  legend.setKinds(view->model() != nullptr ? view->model()->kinds() : 0);
  legend.setKindsOffGpu(view->model() != nullptr ? view->model()->kindsOffGpu() : ~uint32_t{0});
  legend.setHasSteps(view->model() == nullptr || !view->model()->steps().empty());
  legend.resize(view->width(), legend.heightForWidth(view->width()));
}

PictureLayout layoutOf(const TimelineView* view, const LegendWidget& legend) {
  PictureLayout l;
  l.titleHeight = QFontMetrics(titleFont(view)).height() + kTitlePadding;
  l.legendHeight = legend.height();
  const int rowsBottom =
      TimelinePlacement::kRulerHeight + view->contentHeight() - view->scrollY() + kBelowRows;
  l.viewHeight = std::clamp(rowsBottom, TimelinePlacement::kRulerHeight, view->height());
  return l;
}

void paintPicture(QPainter& p, TimelineView* view, LegendWidget& legend, const PictureLayout& l,
                  const QString& title) {
  const int width = view->width();
  const QPalette& pal = view->palette();
  p.fillRect(QRect(0, 0, width, l.height()), pal.color(QPalette::Base));
  p.setFont(titleFont(view));
  p.setPen(pal.color(QPalette::WindowText));
  p.drawText(QRect(kTitlePadding, 0, width - 2 * kTitlePadding, l.titleHeight),
             Qt::AlignVCenter | Qt::AlignLeft, title);
  legend.render(&p, QPoint(0, l.titleHeight));
  view->render(&p, QPoint(0, l.titleHeight + l.legendHeight), QRegion(0, 0, width, l.viewHeight));
}

}  // namespace

QSize timelinePictureSize(const TimelineView* view) {
  LegendWidget legend;
  matchLegend(legend, view);
  return {view->width(), layoutOf(view, legend).height()};
}

Status exportTimeline(TimelineView* view, const QString& title, const QString& path) {
  LegendWidget legend;
  matchLegend(legend, view);
  const PictureLayout l = layoutOf(view, legend);
  return writePicture(path, QSize(view->width(), l.height()), title,
                      [&](QPainter& p) { paintPicture(p, view, legend, l, title); });
}

}  // namespace bubblescope::gui
