// SpanPalette: the one colour per event kind the timeline, its legend and the
// charts share, and the colours of bubbles and selections.
//
// Contract: colourOf() is a pure function of the kind; the legend lists
// exactly the colours the timeline paints (tests compare pixels with it).
#pragma once

#include <QColor>
#include <QPalette>
#include <QString>
#include <vector>

#include "trace_model/event.h"

namespace bubblescope::gui {

// A legend entry: the kind, its label and its colour.
struct LegendEntry {
  trace_model::EventKind kind = trace_model::EventKind::kOther;
  QString label;
  QColor colour;
};

QColor colourOf(trace_model::EventKind kind);
// A readable label ("forward", "all-reduce", "wait (bubble)").
QString labelOf(trace_model::EventKind kind);
// Every kind in legend order (compute first, then collectives, then
// point-to-point, wait, data, GPU, other).
std::vector<LegendEntry> legendEntries();

// The colour of a span of model chunk `chunk` of an interleaved schedule:
// chunk 0 (and -1, no chunk) keeps the kind's colour, each later chunk is a
// darker shade of it (up to chunk 3, then it repeats).
QColor chunkShade(const QColor& kindColour, int32_t chunk);
// Time the whole-run overview has not indexed yet: a flat neutral grey,
// neither a kind colour nor the bubble hatch.
QColor unindexedColour(const QPalette& palette);

// Idle time inside a step is hatched with this colour over the background.
QColor bubbleHatchColour();
// Send -> receive arrows (a light variant on a dark base palette).
QColor arrowColour(const QPalette& palette);

}  // namespace bubblescope::gui
