#include "gui/timeline_painter.h"

#include <algorithm>

#include "gui/timeline_layers.h"

namespace bubblescope::gui {

RowGeometry RowGeometry::of(const std::vector<TimelineRow>& rows) {
  RowGeometry g;
  int y = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].firstOfStage && i > 0)
      y += kStageGap;
    else if (rows[i].firstOfRank && i > 0)
      y += kRankGap;
    g.top.push_back(y);
    y += kLaneHeight;
  }
  g.contentHeight = y;
  return g;
}

int RowGeometry::rowAt(int contentY) const {
  auto it = std::upper_bound(top.begin(), top.end(), contentY);
  if (it == top.begin()) return -1;
  const int row = static_cast<int>(it - top.begin()) - 1;
  return contentY < top[row] + kLaneHeight ? row : -1;
}

namespace {

using Layer = void (*)(QPainter&, const LayerContext&);

// Back to front. Plot layers are clipped to the plot.
constexpr Layer kPlotLayers[] = {paintStageBands,    paintUnindexed,    paintBubbles,
                                 paintCoverage,      paintSpans,        paintKernelInstances,
                                 paintSendArrows,    paintHoverOutline, paintSelectedSpan,
                                 paintLinkedRecords, paintSelectionBand};
constexpr Layer kFrameLayers[] = {paintLabels, paintRuler, paintSelectionLength, paintNote};

}  // namespace

void paintTimeline(QPainter& p, const TimelineFrame& f, const std::vector<TimelineRow>& rows,
                   const RowGeometry& g, const TimelinePlacement& at,
                   const TimelineOverlay& overlay) {
  const LayerContext context(p, f, rows, g, at, overlay);
  p.fillRect(at.plot, context.palette.base());
  for (Layer layer : kPlotLayers) {
    p.save();
    p.setClipRect(at.plot);
    layer(p, context);
    p.restore();
  }
  for (Layer layer : kFrameLayers) {
    p.save();
    layer(p, context);
    p.restore();
  }
}

}  // namespace bubblescope::gui
