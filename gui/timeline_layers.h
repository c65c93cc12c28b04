// The timeline's layers, one painter each, in the order paintTimeline()
// calls them (back to front). Each reads a LayerContext and sets the pen,
// brush, font and render hints it draws with inside its own save/restore, so
// a layer can be added, removed or reordered without changing the others.
// No state, no data access.
#pragma once

#include <QFont>
#include <QPainter>
#include <QPalette>
#include <map>
#include <vector>

#include "gui/timeline_painter.h"

namespace bubblescope::gui {

// The rows of one rank: first and last (inclusive), and its pipeline lane.
struct RankRows {
  int first = -1, last = -1, pipeline = -1;
};

struct LayerContext {
  const TimelineFrame& frame;
  const std::vector<TimelineRow>& rows;
  const RowGeometry& geometry;
  const TimelinePlacement& at;
  const TimelineOverlay& overlay;
  QPalette palette;
  std::map<int32_t, RankRows> rankRows;
  QFont spanFont;   // micro-batch numbers and lane names: 0.8 of the widget's font
  QFont labelFont;  // rank labels: 0.9
  QFont rulerFont;  // ruler, measured length, note: 0.9 · 0.85

  LayerContext(QPainter& p, const TimelineFrame& frame, const std::vector<TimelineRow>& rows,
               const RowGeometry& geometry, const TimelinePlacement& at,
               const TimelineOverlay& overlay);
  int rowTop(int row) const { return at.yOf(geometry.top[row]); }
};

// Where paintLabels() puts a row's rank label and lane name, in a label
// column `labelWidth` wide (rects of one row's height at y = 0): the lane
// names get the width of the widest (up to 3/5 of the column), right-aligned
// against the plot; the rank label the rest. Text wider than its rect is
// elided in the middle, never clipped.
struct LabelColumns {
  QRect rank, lane;
};
LabelColumns labelColumns(const QFont& spanFont, const std::vector<TimelineRow>& rows,
                          int labelWidth);

// Inside the plot (clipped to it):
void paintStageBands(QPainter& p, const LayerContext& c);     // a tint on odd stages
void paintUnindexed(QPainter& p, const LayerContext& c);      // "not indexed yet" grey
void paintBubbles(QPainter& p, const LayerContext& c);        // hatched idle time
void paintCoverage(QPainter& p, const LayerContext& c);       // binned rows
void paintSpans(QPainter& p, const LayerContext& c);          // one box per span
// The picked kernel's instances: the columns each touches on its row, tinted
// in the highlight colour with a bar of the text colour above and below (a
// run of one or two columns: filled with the text colour, a tick). Only
// inside those columns and the row's lane: nothing else changes.
void paintKernelInstances(QPainter& p, const LayerContext& c);
void paintSendArrows(QPainter& p, const LayerContext& c);     // send -> receive
void paintHoverOutline(QPainter& p, const LayerContext& c);   // the span under the cursor
void paintSelectedSpan(QPainter& p, const LayerContext& c);   // the clicked span
void paintLinkedRecords(QPainter& p, const LayerContext& c);  // launch -> GPU records
void paintSelectionBand(QPainter& p, const LayerContext& c);  // the measured interval
// Around it:
void paintLabels(QPainter& p, const LayerContext& c);           // rank and lane names
void paintRuler(QPainter& p, const LayerContext& c);            // time ticks, step marks
void paintSelectionLength(QPainter& p, const LayerContext& c);  // "Δ 11.1 ms"
void paintNote(QPainter& p, const LayerContext& c);             // "indexing 40%"

}  // namespace bubblescope::gui
