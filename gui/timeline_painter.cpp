#include "gui/timeline_painter.h"

#include <QGuiApplication>
#include <QImage>
#include <QPainterPath>
#include <QPalette>
#include <algorithm>
#include <cmath>
#include <map>

#include "gui/span_palette.h"
#include "gui/time_format.h"

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

struct RankRows {
  int first = -1, last = -1, pipeline = -1;
};

std::map<int32_t, RankRows> rankRowsOf(const std::vector<TimelineRow>& rows) {
  std::map<int32_t, RankRows> out;
  for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
    RankRows& r = out[rows[i].rank];
    if (r.first < 0) r.first = i;
    r.last = i;
    if (rows[i].lane == tracer::Lane::kPipeline) r.pipeline = i;
  }
  return out;
}

QColor textOn(const QColor& fill) {
  return fill.lightness() > 140 ? Qt::black : Qt::white;
}

void paintBubbleRect(QPainter& p, const QRectF& r) {
  QColor faint = bubbleHatchColour();
  faint.setAlpha(28);
  p.fillRect(r, faint);
  p.fillRect(r, QBrush(bubbleHatchColour(), Qt::BDiagPattern));
}

void paintCoverage(QPainter& p, const TimelineFrame& f, const RowGeometry& g,
                   const TimelinePlacement& at) {
  if (f.coverage.empty()) return;
  QImage image(at.plot.size(), QImage::Format_ARGB32_Premultiplied);
  image.fill(Qt::transparent);
  const int h = RowGeometry::kLaneHeight - 3;
  auto* pixels = reinterpret_cast<QRgb*>(image.bits());
  const qsizetype stride = image.bytesPerLine() / static_cast<qsizetype>(sizeof(QRgb));
  for (const RowCoverage& rc : f.coverage) {
    const int top = at.yOf(g.top[rc.row]) + 2 - at.plot.top();
    std::vector<QRgb> colours;
    for (const KindCoverage& k : rc.kinds) colours.push_back(colourOf(k.kind).rgba());
    const int columns = std::min(f.columns, image.width());
    for (int c = 0; c < columns; ++c) {
      double cumulative = 0.0;
      int filled = 0;  // pixels filled from the bottom of the lane
      for (size_t k = 0; k < rc.kinds.size(); ++k) {
        cumulative = std::min(1.0, cumulative + rc.kinds[k].fraction[c]);
        const int upTo = static_cast<int>(cumulative * h + 0.5);
        for (int y = filled; y < upTo; ++y) {
          const int iy = top + h - 1 - y;
          if (iy >= 0 && iy < image.height()) pixels[iy * stride + c] = colours[k];
        }
        filled = std::max(filled, upTo);
      }
    }
  }
  p.drawImage(at.plot.topLeft(), image);
}

void paintArrow(QPainter& p, QPointF from, QPointF to) {
  p.drawLine(from, to);
  const QPointF d = to - from;
  const double len = std::hypot(d.x(), d.y());
  if (len < 4) return;
  const QPointF u = d / len;
  const QPointF n(-u.y(), u.x());
  QPainterPath head;
  head.moveTo(to);
  head.lineTo(to - u * 7 + n * 3.5);
  head.lineTo(to - u * 7 - n * 3.5);
  head.closeSubpath();
  p.fillPath(head, p.pen().color());
}

void paintRuler(QPainter& p, const TimelinePlacement& at, const TimelineOverlay& overlay,
                const QPalette& pal) {
  const QRect ruler(at.plot.left(), 0, at.plot.width(), TimelinePlacement::kRulerHeight);
  p.fillRect(QRect(0, 0, at.plot.right() + 1, ruler.height()), pal.window());
  p.setPen(pal.color(QPalette::Mid));
  p.drawLine(0, ruler.bottom(), at.plot.right(), ruler.bottom());
  const double nsPerPx = (at.t1Ns - at.t0Ns) / at.plot.width();
  const double tick = niceTickNs(nsPerPx * 90);
  const double rel0 = at.t0Ns - at.originNs;
  const double first = std::ceil(rel0 / tick) * tick;
  p.setPen(pal.color(QPalette::WindowText));
  QFont small = p.font();
  small.setPointSizeF(small.pointSizeF() * 0.85);
  p.setFont(small);
  for (double t = first; t < at.t1Ns - at.originNs; t += tick) {
    const double x = at.xOf(t + at.originNs);
    p.drawLine(QPointF(x, ruler.bottom() - 6), QPointF(x, ruler.bottom()));
    for (int i = 1; i < 5; ++i) {
      const double xm = at.xOf(t + at.originNs + i * tick / 5);
      p.drawLine(QPointF(xm, ruler.bottom() - 3), QPointF(xm, ruler.bottom()));
    }
    p.drawText(QPointF(x + 3, ruler.bottom() - 8), formatDuration(t));
  }
  if (overlay.steps != nullptr) {
    // Step marks: a line per step when they are at least 4 px apart, a label
    // where it does not overlap the previous one.
    p.setPen(QColor(0x1565c0));
    double lastLine = -1e9, lastLabel = -1e9;
    for (const StepWindow& s : *overlay.steps) {
      const double x = at.xOf(s.startNs);
      if (x < at.plot.left() || x > at.plot.right()) continue;
      if (x - lastLine < 4) continue;
      lastLine = x;
      p.drawLine(QPointF(x, 0), QPointF(x, 13));
      const QString label = QStringLiteral("step %1").arg(s.step);
      if (x - lastLabel > p.fontMetrics().horizontalAdvance(label) + 8) {
        p.drawText(QPointF(x + 3, 11), label);
        lastLabel = x;
      }
    }
  }
}

}  // namespace

void paintTimeline(QPainter& p, const TimelineFrame& f, const std::vector<TimelineRow>& rows,
                   const RowGeometry& g, const TimelinePlacement& at,
                   const TimelineOverlay& overlay) {
  const QPalette pal = QGuiApplication::palette();
  p.fillRect(at.plot, pal.base());
  const auto rankRows = rankRowsOf(rows);
  const int laneH = RowGeometry::kLaneHeight;
  auto rowTopY = [&](int row) { return at.yOf(g.top[row]); };

  p.save();
  p.setClipRect(at.plot);
  // Stage bands: alternate a light tint per pipeline stage.
  for (int r = f.firstRow; r <= f.lastRow; ++r) {
    if (rows[r].pp % 2 == 1) {
      QColor tint = pal.color(QPalette::AlternateBase);
      p.fillRect(QRect(at.plot.left(), rowTopY(r), at.plot.width(), laneH), tint);
    }
  }
  // Bubbles behind the spans, over every lane of the rank.
  for (const BubbleInterval& b : f.bubbles) {
    auto it = rankRows.find(b.rank);
    if (it == rankRows.end()) continue;
    const double x0 = at.xOf(b.startNs), x1 = at.xOf(b.endNs);
    const int y0 = rowTopY(it->second.first);
    const int y1 = rowTopY(it->second.last) + laneH;
    paintBubbleRect(p, QRectF(x0, y0, std::max(1.0, x1 - x0), y1 - y0));
  }
  for (const RankIdleColumns& idle : f.idleColumns) {
    auto it = rankRows.find(idle.rank);
    if (it == rankRows.end()) continue;
    const int y0 = rowTopY(it->second.first);
    const int y1 = rowTopY(it->second.last) + laneH;
    for (int c = 0; c < static_cast<int>(idle.idle.size());) {
      if (!idle.idle[c]) {
        ++c;
        continue;
      }
      int e = c;
      while (e < static_cast<int>(idle.idle.size()) && idle.idle[e]) ++e;
      paintBubbleRect(p, QRectF(at.plot.left() + c, y0, e - c, y1 - y0));
      c = e;
    }
  }
  paintCoverage(p, f, g, at);
  // Spans.
  QFont spanFont = p.font();
  spanFont.setPointSizeF(spanFont.pointSizeF() * 0.8);
  p.setFont(spanFont);
  const QFontMetrics fm(spanFont);
  for (const FrameSpan& s : f.spans) {
    const double x0 = std::max<double>(at.xOf(s.startNs), at.plot.left() - 1);
    const double x1 = std::min<double>(at.xOf(s.endNs), at.plot.right() + 2);
    const int left = static_cast<int>(std::floor(x0));
    const int width = std::max(1, static_cast<int>(std::floor(x1)) - left);
    const QRect r(left, rowTopY(s.row) + 2, width, laneH - 3);
    const QColor fill = colourOf(s.kind);
    p.fillRect(r, fill);
    if (width >= 6) p.fillRect(QRect(r.left(), r.top(), 1, r.height()), fill.darker(140));
    if (s.microBatch >= 0) {
      const QString label = QString::number(s.microBatch);
      if (fm.horizontalAdvance(label) + 4 <= width) {
        p.setPen(textOn(fill));
        p.drawText(r, Qt::AlignCenter, label);
      }
    }
  }
  // Send -> receive arrows, between the pipeline lanes of the two ranks.
  p.setRenderHint(QPainter::Antialiasing, true);
  p.setPen(QPen(arrowColour(pal), 1.2));
  for (const FrameArrow& a : f.arrows) {
    auto from = rankRows.find(a.fromRank), to = rankRows.find(a.toRank);
    if (from == rankRows.end() || to == rankRows.end()) continue;
    const int fr = from->second.pipeline >= 0 ? from->second.pipeline : from->second.first;
    const int tr = to->second.pipeline >= 0 ? to->second.pipeline : to->second.first;
    paintArrow(p, QPointF(at.xOf(a.fromNs), rowTopY(fr) + laneH / 2.0),
               QPointF(at.xOf(a.toNs), rowTopY(tr) + laneH / 2.0));
  }
  p.setRenderHint(QPainter::Antialiasing, false);
  if (overlay.highlighted) {
    const tracer::Event& e = *overlay.highlighted;
    for (int r = f.firstRow; r <= f.lastRow; ++r) {
      if (rows[r].rank != e.rank || rows[r].lane != e.lane) continue;
      const double x0 = at.xOf(e.startNs), x1 = at.xOf(e.endNs);
      p.setPen(QPen(pal.color(QPalette::Highlight), 2));
      p.setBrush(Qt::NoBrush);
      p.drawRect(QRectF(x0 - 1, rowTopY(r) + 1, std::max(2.0, x1 - x0 + 2), laneH - 1));
    }
  }
  if (overlay.selected) {
    // The clicked span: a thick outline in the text colour with a highlight
    // halo, visible on every span colour and in both palettes.
    const tracer::Event& e = *overlay.selected;
    for (int r = f.firstRow; r <= f.lastRow; ++r) {
      if (rows[r].rank != e.rank || rows[r].lane != e.lane) continue;
      const double x0 = at.xOf(e.startNs), x1 = at.xOf(e.endNs);
      const QRectF box(x0 - 2, rowTopY(r), std::max(3.0, x1 - x0 + 4), laneH + 1);
      p.setBrush(Qt::NoBrush);
      p.setPen(QPen(pal.color(QPalette::Highlight), 4));
      p.drawRect(box);
      p.setPen(QPen(pal.color(QPalette::WindowText), 2));
      p.drawRect(box);
    }
  }
  if (overlay.selected && !overlay.linked.empty()) {
    // Launch -> GPU record, from the launch's start on its cuda api row to
    // the record's start on its stream row, as Nsight and Perfetto draw it.
    auto rowOf = [&](const tracer::Event& e) {
      for (int r = 0; r < static_cast<int>(rows.size()); ++r) {
        if (rows[r].rank == e.rank && rows[r].lane == e.lane) return r;
      }
      return -1;
    };
    p.setRenderHint(QPainter::Antialiasing, true);
    for (const tracer::Event& other : overlay.linked) {
      const bool otherIsRecord = tracer::isGpuStreamLane(other.lane);
      const tracer::Event& launch = otherIsRecord ? *overlay.selected : other;
      const tracer::Event& record = otherIsRecord ? other : *overlay.selected;
      const int from = rowOf(launch), to = rowOf(record);
      if (from < 0 || to < 0) continue;
      const int r = rowOf(other);
      const double x0 = at.xOf(other.startNs), x1 = at.xOf(other.endNs);
      p.setBrush(Qt::NoBrush);
      p.setPen(QPen(pal.color(QPalette::Highlight), 2));
      p.drawRect(QRectF(x0 - 1, rowTopY(r) + 1, std::max(2.0, x1 - x0 + 2), laneH - 1));
      paintArrow(p, QPointF(at.xOf(launch.startNs), rowTopY(from) + laneH / 2.0),
                 QPointF(at.xOf(record.startNs), rowTopY(to) + laneH / 2.0));
    }
    p.setRenderHint(QPainter::Antialiasing, false);
  }
  if (overlay.selectionNs) {
    const auto [a, b] = *overlay.selectionNs;
    const double x0 = at.xOf(std::min(a, b)), x1 = at.xOf(std::max(a, b));
    QColor band = pal.color(QPalette::Highlight);
    band.setAlpha(50);
    p.fillRect(QRectF(x0, at.plot.top(), x1 - x0, at.plot.height()), band);
    p.setPen(pal.color(QPalette::Highlight));
    p.drawLine(QPointF(x0, at.plot.top()), QPointF(x0, at.plot.bottom()));
    p.drawLine(QPointF(x1, at.plot.top()), QPointF(x1, at.plot.bottom()));
  }
  p.restore();

  // Labels.
  const QRect labels(0, at.plot.top(), at.plot.left(), at.plot.height());
  p.fillRect(labels, pal.window());
  p.save();
  p.setClipRect(labels);
  QFont labelFont = p.font();
  labelFont.setPointSizeF(spanFont.pointSizeF() / 0.8 * 0.9);
  for (int r = f.firstRow; r <= f.lastRow; ++r) {
    const int y = rowTopY(r);
    if (rows[r].firstOfStage) {
      p.setPen(pal.color(QPalette::Mid));
      p.drawLine(0, y - 3, at.plot.right(), y - 3);
    }
    if (std::find(overlay.markedRanks.begin(), overlay.markedRanks.end(), rows[r].rank) !=
        overlay.markedRanks.end()) {
      QColor mark = pal.color(QPalette::Highlight);
      mark.setAlpha(70);
      p.fillRect(QRect(0, y, at.plot.left(), laneH), mark);
    }
    p.setPen(pal.color(QPalette::WindowText));
    p.setFont(labelFont);
    if (rows[r].firstOfRank) {
      p.drawText(QRect(6, y, at.plot.left() - 70, laneH), Qt::AlignVCenter | Qt::AlignLeft,
                 rows[r].rankLabel);
    }
    p.setPen(pal.color(QPalette::PlaceholderText));
    p.setFont(spanFont);
    p.drawText(QRect(at.plot.left() - 66, y, 60, laneH), Qt::AlignVCenter | Qt::AlignRight,
               rows[r].laneLabel);
  }
  p.restore();
  p.setFont(labelFont);
  paintRuler(p, at, overlay, pal);
  if (overlay.selectionNs) {
    const auto [a, b] = *overlay.selectionNs;
    const QString text = QStringLiteral("Δ %1").arg(formatDuration(std::fabs(b - a)));
    const double x = at.xOf(std::min(a, b));
    const QRect box(static_cast<int>(x) + 4, 2, p.fontMetrics().horizontalAdvance(text) + 10, 18);
    p.fillRect(box, pal.color(QPalette::Highlight));
    p.setPen(pal.color(QPalette::HighlightedText));
    p.drawText(box, Qt::AlignCenter, text);
  }
  if (!f.note.isEmpty()) {
    p.setPen(pal.color(QPalette::PlaceholderText));
    p.drawText(QRect(at.plot.left(), at.plot.top() + 2, at.plot.width() - 8, 16),
               Qt::AlignRight | Qt::AlignTop, f.note);
  }
}

}  // namespace bubblescope::gui
