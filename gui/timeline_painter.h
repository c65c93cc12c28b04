// Painting of a TimelineFrame: where rows and times go, and paintTimeline(),
// which draws the layers of timeline_layers.h back to front (stage bands,
// bubbles, coverage, spans, kernel instances, arrows, outlines, selection; then labels, ruler,
// measured length, note). No state, no data access: everything drawn comes
// from the frame and the geometry passed in, and the one optional
// TimelinePaintCache the caller owns (pixels kept between frames, never data).
#pragma once

#include <QImage>
#include <QPainter>
#include <QRect>
#include <optional>
#include <vector>

#include "gui/timeline_frame.h"
#include "gui/timeline_model.h"

namespace bubblescope::gui {

// Vertical placement of rows: row i spans [top[i], top[i] + laneHeight) in
// content coordinates (0 = the first row, before scrolling).
struct RowGeometry {
  static constexpr int kLaneHeight = 18;
  static constexpr int kRankGap = 3;   // after the last lane of a rank
  static constexpr int kStageGap = 6;  // before the first rank of a stage

  std::vector<int> top;
  int contentHeight = 0;

  static RowGeometry of(const std::vector<TimelineRow>& rows);
  // The row at content y, or -1.
  int rowAt(int contentY) const;
};

// Where things go in the widget, in widget pixels.
struct TimelinePlacement {
  static constexpr int kRulerHeight = 28;
  static constexpr int kLabelWidth = 200;

  QRect plot;       // the time area under the ruler, right of the labels
  int scrollY = 0;  // content y at plot.top()
  double t0Ns = 0, t1Ns = 1;
  int64_t originNs = 0;  // ruler labels count from here (the run's start)

  double xOf(double tNs) const { return plot.left() + (tNs - t0Ns) * plot.width() / (t1Ns - t0Ns); }
  double tOf(double x) const { return t0Ns + (x - plot.left()) * (t1Ns - t0Ns) / plot.width(); }
  int yOf(int contentY) const { return plot.top() + contentY - scrollY; }
};

// What a caller painting frame after frame (TimelineView) keeps between
// them, so that a frame does not redo what did not change: the label column
// as last painted (redrawn when its key changes: the rows shown, scroll,
// size, marked ranks, palette, fonts; the owner clears it when the rows
// change), and the coverage layer's image (reused, not reallocated).
// Pixels only: a frame painted with the cache is the frame painted without.
struct TimelinePaintCache {
  QImage labels;
  QString labelsKey;
  QImage coverage;
  void clear() { *this = {}; }
};

// Decorations that are state of the view, not of the data.
struct TimelineOverlay {
  std::optional<std::pair<double, double>> selectionNs;  // measured interval
  std::optional<trace_model::Event> highlighted;         // the span under the cursor
  std::optional<trace_model::Event> selected;            // the clicked span (outlined)
  // The selected span's launch call or GPU records (same correlation id): an
  // arrow goes from the launch to each record, and they are outlined.
  std::vector<trace_model::Event> linked;
  std::vector<int32_t> markedRanks;  // ranks picked in a chart (labels tinted)
  // Every instance of the kernel picked in the Kernels table (its GPU
  // records on one rank, TimelineView::setHighlightedKernel): each marks the
  // pixel columns it touches on its row, whether the row draws spans or
  // binned coverage. Null or empty: none.
  const std::vector<trace_model::Event>* kernelInstances = nullptr;
  const std::vector<trace_model::StepWindow>* steps = nullptr;  // step marks on the ruler
  TimelinePaintCache* cache = nullptr;  // optional: the caller's, kept between frames
};

void paintTimeline(QPainter& painter, const TimelineFrame& frame,
                   const std::vector<TimelineRow>& rows, const RowGeometry& geometry,
                   const TimelinePlacement& placement, const TimelineOverlay& overlay);

}  // namespace bubblescope::gui
