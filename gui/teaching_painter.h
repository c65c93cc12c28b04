// Painting of the teaching lab (TeachingLabModel): a measured run's step per
// stage above the ideal schedule's, on one time axis; each simulated stage
// has its ops (coloured by kind, a shade per interleaved chunk, micro-batch
// numbers), its bubble hatched, and an "activations in flight" lane under it;
// the bubble formula with its numbers is written on the timeline right of
// the simulated step;
// a "now" line marks how far a step-through has come. No state, no data
// access: everything drawn comes from the model.
#pragma once

#include <QColor>
#include <QFont>
#include <QPainter>
#include <QPalette>
#include <QRect>
#include <QRectF>

#include "gui/teaching_lab_model.h"
#include "trace_model/event.h"

namespace bubblescope::gui {

// Where the rows go, in widget pixels.
struct TeachingGeometry {
  static constexpr int kLabelWidth = 190;
  static constexpr int kHeaderHeight = 26;
  static constexpr int kTitleHeight = 22;
  static constexpr int kNoteHeight = 18;
  static constexpr int kMeasuredRow = 16;
  static constexpr int kOpRow = 22;
  static constexpr int kInFlightRow = 18;
  static constexpr int kStageGap = 5;
  static constexpr int kRulerHeight = 24;
  static constexpr int kLegendHeight = 22;

  QRect plot;        // the time area: x range of the time axis, whole height
  double endNs = 1;  // the axis spans [0, endNs)
  // Measured ns -> axis ns: 1 on the same time scale, else the ideal step's
  // length over the measured step's (the measured step spans the ideal one).
  double measuredScale = 1;
  // Where the formula is written: right of the simulated step, or of "now"
  // while stepping through (the axis leaves room for it there).
  QRectF formula;
  int measuredTop = 0;
  int simulatedTop = 0;  // first simulated stage row
  int simulatedBottom = 0;
  int rulerTop = 0;
  int height = 0;  // everything painted

  double xOf(double ns) const { return plot.left() + ns * plot.width() / endNs; }
  double xOfMeasured(double ns) const { return xOf(ns * measuredScale); }
  int opRowTop(int stage) const {
    return simulatedTop + stage * (kOpRow + kInFlightRow + kStageGap);
  }
  int inFlightTop(int stage) const { return opRowTop(stage) + kOpRow; }
};

// `font`: the font the lab is painted with (the formula is 1.15 times it, bold).
TeachingGeometry teachingGeometry(const TeachingLabModel& model, int width, const QFont& font);

// The fill of a compute op: the kind's colour (span_palette.h), darker for
// each later chunk, so interleaved chunks are told apart.
QColor chunkColour(trace_model::EventKind kind, int32_t chunk);
// The trace kind an op is drawn as (Forward -> kForward, ...).
trace_model::EventKind kindOfOp(layout::OpType type);
// The fill of the activations-in-flight lane.
QColor inFlightColour();
// A measured stage's row label: "stage 1 (rank 3) 24%" (its bubble), or
// "rank 0 (stage ?) 73%" for a rank whose stage the trace does not say (an
// import; not "stage -1").
QString measuredStageLabel(const analysis::MeasuredStage& stage);

void paintTeachingLab(QPainter& painter, const TeachingLabModel& model, int width,
                      const QPalette& palette);

}  // namespace bubblescope::gui
