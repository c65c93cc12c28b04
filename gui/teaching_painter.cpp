#include "gui/teaching_painter.h"

#include <QFontMetrics>
#include <QStringList>
#include <algorithm>
#include <cmath>

#include "gui/span_palette.h"
#include "gui/time_format.h"

namespace bubblescope::gui {

QString measuredStageLabel(const analysis::MeasuredStage& stage) {
  const QString bubble = QString::number(stage.bubble * 100, 'f', 0);
  if (stage.stage < 0) return QStringLiteral("rank %1 (stage ?) %2%").arg(stage.rank).arg(bubble);
  return QStringLiteral("stage %1 (rank %2) %3%").arg(stage.stage).arg(stage.rank).arg(bubble);
}

namespace {

using trace_model::EventKind;
using G = TeachingGeometry;

QString scheduleName(layout::ScheduleKind kind) {
  return QString::fromLatin1(layout::scheduleKindName(kind));
}

QColor textOn(const QColor& fill) {
  return fill.lightness() > 140 ? Qt::black : Qt::white;
}

void drawBox(QPainter& p, const QRectF& r, const QColor& fill, int32_t microBatch) {
  p.fillRect(r, fill);
  p.setPen(QPen(fill.darker(150), 0));
  p.drawRect(r);
  if (microBatch < 0 || r.width() < 9) return;
  const QString text = QString::number(microBatch);
  if (p.fontMetrics().horizontalAdvance(text) + 2 > r.width()) return;
  p.setPen(textOn(fill));
  p.drawText(r, Qt::AlignCenter, text);
}

void paintHeader(QPainter& p, const TeachingLabModel& m, const G& g, const QPalette& pal) {
  const TeachingParams& t = m.params();
  QFont f = p.font();
  f.setBold(true);
  p.setFont(f);
  p.setPen(pal.color(QPalette::Text));
  QString text =
      QStringLiteral("Ideal %1 · p = %2 · m = %3").arg(scheduleName(t.kind)).arg(t.p).arg(t.m);
  if (t.chunks() > 1) text += QStringLiteral(" · v = %1").arg(t.chunks());
  text += QStringLiteral(" · F : B : W : comm = 1 : %1 : %2 : %3 · F = %4")
              .arg(t.backward, 0, 'f', 2)
              .arg(t.weight, 0, 'f', 2)
              .arg(t.comm, 0, 'f', 2)
              .arg(formatDuration(t.unitNs));
  p.drawText(QRect(6, 0, g.plot.right(), G::kHeaderHeight), Qt::AlignVCenter | Qt::AlignLeft, text);
}

// The lines under the measured step's title: the oversubscription note
// (red), then the ideal-hardware replay.
QStringList measuredNotes(const TeachingLabModel& m) {
  QStringList notes;
  for (const QString& n : {m.oversubscribedNote(), m.replayNote()}) {
    if (!n.isEmpty()) notes << n;
  }
  return notes;
}

void paintMeasured(QPainter& p, const TeachingLabModel& m, const G& g, const QPalette& pal) {
  if (!m.measured()) return;
  const analysis::MeasuredStep& s = *m.measured();
  int y = g.measuredTop;
  p.setPen(pal.color(QPalette::Text));
  QFont bold = p.font();
  bold.setBold(true);
  p.save();
  p.setFont(bold);
  p.drawText(QRect(6, y, g.plot.right(), G::kTitleHeight), Qt::AlignVCenter,
             QStringLiteral("Measured: %1 · step %2 · %3%4")
                 .arg(m.measuredLabel())
                 .arg(s.step)
                 .arg(formatDuration(static_cast<double>(s.durationNs)))
                 .arg(m.sameTimeScale() ? QString()
                                        : QStringLiteral(" · drawn to the ideal step's length")));
  p.restore();
  y += G::kTitleHeight;
  const QColor noteColours[] = {QColor(0xc6, 0x28, 0x28), pal.color(QPalette::Text)};
  const QStringList notes = measuredNotes(m);
  for (int i = 0; i < notes.size(); ++i) {
    p.save();
    p.setPen(noteColours[std::min(i, 1)]);
    const QRect r(6, y, g.plot.right() - 6, G::kNoteHeight);
    p.drawText(r, Qt::AlignVCenter,
               p.fontMetrics().elidedText(notes[i], Qt::ElideRight, r.width()));
    p.restore();
    y += G::kNoteHeight;
  }
  for (const analysis::MeasuredStage& st : s.stages) {
    p.setPen(pal.color(QPalette::Text));
    p.drawText(QRect(6, y, G::kLabelWidth - 10, G::kMeasuredRow), Qt::AlignVCenter,
               measuredStageLabel(st));
    for (const analysis::StageSpan& span : st.spans) {
      const double x0 = g.xOfMeasured(static_cast<double>(span.startNs));
      const double x1 = std::max(g.xOfMeasured(static_cast<double>(span.endNs)), x0 + 1);
      drawBox(p, QRectF(x0, y + 1, x1 - x0, G::kMeasuredRow - 2),
              chunkColour(span.kind, std::max(span.chunk, 0)), -1);
    }
    y += G::kMeasuredRow;
  }
}

void paintInFlight(QPainter& p, const std::vector<layout::InFlightPoint>& pts, double untilNs,
                   int32_t maxCount, int top, const G& g, const QPalette& pal) {
  const int h = G::kInFlightRow - 3;
  const int base = top + G::kInFlightRow - 2;
  p.setPen(QPen(pal.color(QPalette::Mid), 0));
  p.drawLine(QPointF(g.plot.left(), base + 0.5), QPointF(g.xOf(untilNs), base + 0.5));
  double lastLabelEnd = -1e9;  // x where the last written count ends
  int32_t lastLabel = 0;       // a count is written where it changes
  for (size_t i = 0; i < pts.size(); ++i) {
    const double t0 = pts[i].time;
    const double t1 = i + 1 < pts.size() ? pts[i + 1].time : untilNs;
    if (pts[i].count <= 0 || !(t1 > t0)) continue;
    const double x0 = g.xOf(t0), x1 = g.xOf(t1);
    const double bar = h * static_cast<double>(pts[i].count) / maxCount;
    p.fillRect(QRectF(x0, base - bar, x1 - x0, bar), inFlightColour());
    const QString label = QString::number(pts[i].count);
    const int labelWidth = p.fontMetrics().horizontalAdvance(label);
    if (pts[i].count != lastLabel && x1 - x0 >= 9 && x0 >= lastLabelEnd + 3) {
      p.setPen(pal.color(QPalette::Text));
      p.drawText(QRectF(x0, top, std::max(x1 - x0, labelWidth + 2.0), G::kInFlightRow - 2),
                 Qt::AlignLeft | Qt::AlignVCenter, label);
      lastLabelEnd = x0 + labelWidth;
      lastLabel = pts[i].count;
    }
  }
}

void paintSimulated(QPainter& p, const TeachingLabModel& m, const G& g, const QPalette& pal) {
  const layout::Simulation& sim = m.simulation();
  const int32_t stages = m.schedule().stages;
  QFont bold = p.font();
  bold.setBold(true);
  p.save();
  p.setFont(bold);
  p.setPen(pal.color(QPalette::Text));
  p.drawText(
      QRect(6, g.simulatedTop - G::kTitleHeight, g.plot.right(), G::kTitleHeight), Qt::AlignVCenter,
      QStringLiteral("Ideal schedule (simulated) · step %1 · bubble so far %2% (%3 of %4 ops)")
          .arg(formatDuration(sim.makespan))
          .arg(m.bubbleSoFar() * 100, 0, 'f', 1)
          .arg(m.shown())
          .arg(m.order().size()));
  p.restore();
  const double until = m.shownUntilNs();
  const std::vector<int32_t> peaks = m.peakInFlight();
  const int32_t maxCount = std::max(1, *std::max_element(peaks.begin(), peaks.end()));
  for (int32_t k = 0; k < stages; ++k) {
    const int top = g.opRowTop(k);
    p.setPen(pal.color(QPalette::Text));
    p.drawText(QRect(6, top, G::kLabelWidth - 10, G::kOpRow), Qt::AlignVCenter,
               QStringLiteral("stage %1").arg(k));
    p.setPen(pal.color(QPalette::PlaceholderText));
    p.drawText(QRect(14, g.inFlightTop(k), G::kLabelWidth - 18, G::kInFlightRow), Qt::AlignVCenter,
               QStringLiteral("activations (peak %1)").arg(peaks[k]));
    // Idle time up to `until` is bubble: hatched under the ops.
    if (until > 0) {
      const QRectF row(g.plot.left(), top + 1, g.xOf(until) - g.plot.left(), G::kOpRow - 2);
      p.fillRect(row, QBrush(bubbleHatchColour(), Qt::BDiagPattern));
    }
    paintInFlight(p, m.inFlight()[k], until, maxCount, g.inFlightTop(k), g, pal);
  }
  for (size_t i = 0; i < m.shown(); ++i) {
    const layout::PlaybackOp& o = m.order()[i];
    const double x0 = g.xOf(o.start), x1 = std::max(g.xOf(o.end), x0 + 1);
    const bool perMicroBatch = o.op.microBatch >= 0;
    drawBox(p, QRectF(x0, g.opRowTop(o.stage) + 1, x1 - x0, G::kOpRow - 2),
            chunkColour(kindOfOp(o.op.type), perMicroBatch ? o.op.chunk : 0), o.op.microBatch);
  }
  if (!m.atEnd()) {  // the step-through's "now"
    const double x = g.xOf(until);
    p.setPen(QPen(pal.color(QPalette::Highlight), 2));
    p.drawLine(QPointF(x, g.simulatedTop - 4), QPointF(x, g.simulatedBottom));
  }
}

QFont formulaFont(const QFont& base) {
  QFont f = base;
  f.setBold(true);
  f.setPointSizeF(f.pointSizeF() * 1.15);
  return f;
}

QStringList formulaLines(const TeachingLabModel& m) {
  QStringList lines = {
      QStringLiteral("bubble = ") + m.formulaText(),
      QStringLiteral("simulated %1%").arg(m.simulation().bubbleFraction * 100, 0, 'f', 1)};
  if (!m.atEnd()) {
    lines << QStringLiteral("so far %1% (%2 of %3 ops)")
                 .arg(m.bubbleSoFar() * 100, 0, 'f', 1)
                 .arg(m.shown())
                 .arg(m.order().size());
  }
  return lines;
}

void paintFormula(QPainter& p, const TeachingLabModel& m, const G& g, const QPalette& pal) {
  if (m.shown() == 0) return;
  p.save();
  p.setFont(formulaFont(p.font()));
  QColor back = pal.color(QPalette::Base);
  back.setAlpha(235);
  p.setPen(QPen(pal.color(QPalette::Text), 1));
  p.setBrush(back);
  p.drawRoundedRect(g.formula, 4, 4);
  p.drawText(g.formula, Qt::AlignCenter, formulaLines(m).join("\n"));
  p.restore();
}

void paintRuler(QPainter& p, const G& g, const QPalette& pal) {
  const int y = g.rulerTop;
  p.setPen(pal.color(QPalette::Text));
  p.drawLine(g.plot.left(), y, g.plot.right(), y);
  const double tick = niceTickNs(g.endNs * 90.0 / std::max(g.plot.width(), 1));
  for (double t = 0; t < g.endNs; t += tick) {
    const double x = g.xOf(t);
    p.drawLine(QPointF(x, y), QPointF(x, y + 4));
    p.drawText(QRectF(x + 2, y + 2, 90, G::kRulerHeight - 4), Qt::AlignLeft | Qt::AlignVCenter,
               t == 0 ? QStringLiteral("0") : formatDuration(t));
  }
}

void paintLegend(QPainter& p, const TeachingLabModel& m, const G& g, const QPalette& pal) {
  int x = 6;
  const int y = g.rulerTop + G::kRulerHeight;
  auto chip = [&](const QBrush& brush, const QString& label) {
    p.fillRect(QRect(x, y + 5, 14, 12), brush);
    p.setPen(pal.color(QPalette::Text));
    const int w = p.fontMetrics().horizontalAdvance(label);
    p.drawText(QRect(x + 18, y, w + 4, G::kLegendHeight), Qt::AlignVCenter, label);
    x += 18 + w + 14;
  };
  const int32_t v = m.params().chunks();
  const bool split = m.schedule().splitsBackward();
  for (int32_t c = 0; c < v; ++c) {
    const QString suffix = v > 1 ? QStringLiteral(" (chunk %1)").arg(c) : QString();
    chip(chunkColour(EventKind::kForward, c), QStringLiteral("F") + suffix);
    chip(chunkColour(split ? EventKind::kBackwardInput : EventKind::kBackward, c),
         QStringLiteral("B") + suffix);
    if (split) chip(chunkColour(EventKind::kBackwardWeight, c), QStringLiteral("W") + suffix);
  }
  chip(QBrush(bubbleHatchColour(), Qt::BDiagPattern), QStringLiteral("bubble"));
  chip(inFlightColour(), QStringLiteral("activations held"));
}

}  // namespace

TeachingGeometry teachingGeometry(const TeachingLabModel& m, int width, const QFont& font) {
  G g;
  const double makespan = m.simulation().makespan;
  double end = makespan;
  int y = G::kHeaderHeight;
  if (m.measured()) {
    const double measuredNs = static_cast<double>(m.measured()->durationNs);
    if (m.sameTimeScale()) {
      end = std::max(end, measuredNs);
    } else if (measuredNs > 0) {
      g.measuredScale = makespan / measuredNs;
    }
    g.measuredTop = y;
    y += G::kTitleHeight + static_cast<int>(m.measured()->stages.size()) * G::kMeasuredRow;
    y += static_cast<int>(measuredNotes(m).size()) * G::kNoteHeight;
    y += G::kStageGap;
  }
  y += G::kTitleHeight;
  g.simulatedTop = y;
  g.simulatedBottom = g.opRowTop(m.schedule().stages) - G::kStageGap;
  g.rulerTop = g.simulatedBottom + 4;
  g.height = g.rulerTop + G::kRulerHeight + G::kLegendHeight;
  const int plotWidth = std::max(width - G::kLabelWidth - 16, 10);
  g.plot = QRect(G::kLabelWidth, 0, plotWidth, g.height);

  // The formula goes right of the simulated step (or of "now" while stepping
  // through): the axis is made long enough for it to fit there.
  const QFontMetrics fm(formulaFont(font));
  const QStringList lines = formulaLines(m);
  int w = 0;
  for (const QString& l : lines) w = std::max(w, fm.horizontalAdvance(l));
  w += 14;
  const int h = static_cast<int>(lines.size()) * fm.height() + 6;
  const int room = plotWidth - w - 24;
  g.endNs = std::max(end > 0 ? end * 1.01 : 1.0,
                     room > plotWidth / 4 && makespan > 0 ? makespan * plotWidth / room : 0.0);
  const double after = m.atEnd() ? makespan : m.shownUntilNs();
  const double left = std::min(g.xOf(after) + 12, double(g.plot.right() - w));
  g.formula = QRectF(std::max(left, double(g.plot.left())),
                     (g.simulatedTop + g.simulatedBottom - h) / 2.0, w, h);
  return g;
}

QColor chunkColour(EventKind kind, int32_t chunk) {
  const QColor base = colourOf(kind);
  return chunk <= 0 ? base : base.darker(100 + 45 * chunk);
}

EventKind kindOfOp(layout::OpType type) {
  switch (type) {
    case layout::OpType::kForward:
      return EventKind::kForward;
    case layout::OpType::kBackward:
      return EventKind::kBackward;
    case layout::OpType::kBackwardInput:
      return EventKind::kBackwardInput;
    case layout::OpType::kBackwardWeight:
      return EventKind::kBackwardWeight;
    case layout::OpType::kAllReduceGrads:
      return EventKind::kAllReduce;
    case layout::OpType::kReduceScatterGrads:
      return EventKind::kReduceScatter;
    case layout::OpType::kOptimizerStep:
      return EventKind::kOptimizer;
    default:
      return EventKind::kOther;
  }
}

QColor inFlightColour() {
  return QColor(0x7e, 0x57, 0xc2);
}

void paintTeachingLab(QPainter& painter, const TeachingLabModel& model, int width,
                      const QPalette& palette) {
  const G g = teachingGeometry(model, width, painter.font());
  painter.save();
  painter.fillRect(QRect(0, 0, width, g.height), palette.color(QPalette::Base));
  paintHeader(painter, model, g, palette);
  paintMeasured(painter, model, g, palette);
  paintSimulated(painter, model, g, palette);
  paintFormula(painter, model, g, palette);
  paintRuler(painter, g, palette);
  paintLegend(painter, model, g, palette);
  painter.restore();
}

}  // namespace bubblescope::gui
