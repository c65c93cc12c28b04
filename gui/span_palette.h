// SpanPalette: the one colour per event kind the timeline, its legend and the
// charts share, one colour per GPU kernel category (trace_model/
// kernel_category.h: GPU stream records are coloured by category, not kind),
// and the colours of bubbles and selections.
//
// Contract: colourOf() is a pure function of the kind (or the category); the
// legend lists exactly the colours the timeline paints (tests compare pixels
// with it). The kernel categories' colours are told apart from each other
// and from the light and dark bases (CIE76 ΔE >= 20, tests/gui).
#pragma once

#include <QColor>
#include <QPalette>
#include <QString>
#include <vector>

#include "trace_model/event.h"
#include "trace_model/kernel_category.h"

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

QColor colourOf(trace_model::KernelCategory category);
QString labelOf(trace_model::KernelCategory category);
// What the timeline paints a span or coverage of `kind` with: its kernel
// category's colour when kernelCategory >= 0 (FrameSpan::kernelCategory),
// else the kind's.
QColor spanColour(trace_model::EventKind kind, int kernelCategory);
// An event as the timeline paints and names it: a GPU stream record by its
// kernel category ("GEMM / conv · GPU kernel"), any other event by its kind.
QColor eventColour(const trace_model::Event& e);
QString eventLabel(const trace_model::Event& e);

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
// The timeline ruler's step marks and "step N" labels, over the window
// colour (a light blue on a dark palette: the dark blue was hardly legible).
QColor stepMarkColour(const QPalette& palette);

}  // namespace bubblescope::gui
