#include "gui/timeline_layers.h"

#include <QGuiApplication>
#include <QImage>
#include <QPaintEngine>
#include <QPainterPath>
#include <algorithm>
#include <cmath>

#include "gui/all_to_all_lane.h"
#include "gui/ruler_ticks.h"
#include "gui/span_palette.h"
#include "gui/time_format.h"

namespace bubblescope::gui {

namespace {

std::map<int32_t, RankRows> rankRowsOf(const std::vector<TimelineRow>& rows) {
  std::map<int32_t, RankRows> out;
  for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
    RankRows& r = out[rows[i].rank];
    if (r.first < 0) r.first = i;
    r.last = i;
    if (rows[i].lane == trace_model::Lane::kPipeline) r.pipeline = i;
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

// The rows `e` is drawn on among the frame's rows.
template <typename Visit>
void forRowsOf(const LayerContext& c, const trace_model::Event& e, Visit visit) {
  for (int r = c.frame.firstRow; r <= c.frame.lastRow; ++r) {
    if (c.rows[r].rank == e.rank && static_cast<int32_t>(c.rows[r].lane) == timelineLaneOf(e))
      visit(r);
  }
}

}  // namespace

LayerContext::LayerContext(QPainter& p, const TimelineFrame& frame,
                           const std::vector<TimelineRow>& rows, const RowGeometry& geometry,
                           const TimelinePlacement& at, const TimelineOverlay& overlay)
    : frame(frame),
      rows(rows),
      geometry(geometry),
      at(at),
      overlay(overlay),
      palette(QGuiApplication::palette()),
      rankRows(rankRowsOf(rows)),
      spanFont(p.font()),
      labelFont(p.font()) {
  spanFont.setPointSizeF(spanFont.pointSizeF() * 0.8);
  labelFont.setPointSizeF(spanFont.pointSizeF() / 0.8 * 0.9);
  rulerFont = labelFont;
  rulerFont.setPointSizeF(rulerFont.pointSizeF() * 0.85);
}

void paintStageBands(QPainter& p, const LayerContext& c) {
  for (int r = c.frame.firstRow; r <= c.frame.lastRow; ++r) {
    if (c.rows[r].pp % 2 == 1) {
      const QColor tint = c.palette.color(QPalette::AlternateBase);
      p.fillRect(QRect(c.at.plot.left(), c.rowTop(r), c.at.plot.width(), RowGeometry::kLaneHeight),
                 tint);
    }
  }
}

// Over every lane of the rank, from the first unindexed column to the right
// edge: a flat grey, labelled once per rank where it is wide enough.
void paintUnindexed(QPainter& p, const LayerContext& c) {
  const int laneH = RowGeometry::kLaneHeight;
  const QColor fill = unindexedColour(c.palette);
  p.setFont(c.rulerFont);
  const QString label = QStringLiteral("not indexed yet");
  const int labelW = p.fontMetrics().horizontalAdvance(label) + 12;
  for (const RankUnindexed& u : c.frame.unindexed) {
    auto it = c.rankRows.find(u.rank);
    if (it == c.rankRows.end()) continue;
    const int y0 = c.rowTop(it->second.first);
    const int y1 = c.rowTop(it->second.last) + laneH;
    const QRect r(c.at.plot.left() + u.firstColumn, y0,
                  c.at.plot.right() + 1 - u.firstColumn - c.at.plot.left(), y1 - y0);
    p.fillRect(r, fill);
    if (r.width() < labelW) continue;
    p.setPen(c.palette.color(QPalette::PlaceholderText));
    p.drawText(QRect(r.left() + 6, y0, r.width() - 12, laneH), Qt::AlignVCenter | Qt::AlignLeft,
               label);
  }
}

// Behind the spans, over every lane of the rank: exact intervals, then the
// per-column idle masks of binned views. An interval is hatched over the
// whole pixel columns inside it only, so no hatch pixel shares a column with
// the work on either side of the gap (spans take the columns they touch).
void paintBubbles(QPainter& p, const LayerContext& c) {
  const int laneH = RowGeometry::kLaneHeight;
  for (const BubbleInterval& b : c.frame.bubbles) {
    auto it = c.rankRows.find(b.rank);
    if (it == c.rankRows.end()) continue;
    const double x0 = std::ceil(c.at.xOf(b.startNs)), x1 = std::floor(c.at.xOf(b.endNs));
    if (x1 <= x0) continue;
    const int y0 = c.rowTop(it->second.first);
    const int y1 = c.rowTop(it->second.last) + laneH;
    paintBubbleRect(p, QRectF(x0, y0, x1 - x0, y1 - y0));
  }
  for (const RankIdleColumns& idle : c.frame.idleColumns) {
    auto it = c.rankRows.find(idle.rank);
    if (it == c.rankRows.end()) continue;
    const int y0 = c.rowTop(it->second.first);
    const int y1 = c.rowTop(it->second.last) + laneH;
    for (int col = 0; col < static_cast<int>(idle.idle.size());) {
      if (!idle.idle[col]) {
        ++col;
        continue;
      }
      int e = col;
      while (e < static_cast<int>(idle.idle.size()) && idle.idle[e]) ++e;
      paintBubbleRect(p, QRectF(c.at.plot.left() + col, y0, e - col, y1 - y0));
      col = e;
    }
  }
}

// Kinds stacked from the bottom of the lane, in legend order, one pixel
// column per frame column.
void paintCoverage(QPainter& p, const LayerContext& c) {
  const TimelineFrame& f = c.frame;
  if (f.coverage.empty()) return;
  // The caller's image when it keeps one (no 5 MB allocation a frame).
  QImage local;
  QImage& image = c.overlay.cache != nullptr ? c.overlay.cache->coverage : local;
  if (image.size() != c.at.plot.size() || image.format() != QImage::Format_ARGB32_Premultiplied) {
    image = QImage(c.at.plot.size(), QImage::Format_ARGB32_Premultiplied);
  }
  image.fill(Qt::transparent);
  const int h = RowGeometry::kLaneHeight - 3;
  auto* pixels = reinterpret_cast<QRgb*>(image.bits());
  const qsizetype stride = image.bytesPerLine() / static_cast<qsizetype>(sizeof(QRgb));
  const int imageHeight = image.height();
  std::vector<QRgb> colours;
  for (const RowCoverage& rc : f.coverage) {
    const int top = c.rowTop(rc.row) + 2 - c.at.plot.top();
    colours.clear();
    for (const KindCoverage& k : rc.kinds) {
      colours.push_back(spanColour(k.kind, k.kernelCategory).rgba());
    }
    // Pixel y of the lane (0 at its bottom) lies at image row top + h - 1 - y:
    // those inside the image are y in [yMin, yMax).
    const int yMin = std::max(0, top + h - imageHeight);
    const int yMax = std::min(h, top + h);
    if (yMin >= yMax) continue;
    const int columns = std::min(f.columns, image.width());
    const qsizetype bottom = static_cast<qsizetype>(top + h - 1) * stride;  // may lie outside
    for (int col = 0; col < columns; ++col) {
      double cumulative = 0.0;
      int filled = 0;  // pixels filled from the bottom of the lane
      for (size_t k = 0; k < rc.kinds.size(); ++k) {
        cumulative = std::min(1.0, cumulative + rc.kinds[k].fraction[col]);
        const int upTo = static_cast<int>(cumulative * h + 0.5);
        for (int y = std::max(filled, yMin), end = std::min(upTo, yMax); y < end; ++y) {
          pixels[bottom - y * stride + col] = colours[k];
        }
        filled = std::max(filled, upTo);
      }
    }
  }
  p.drawImage(c.at.plot.topLeft(), image);
}

void paintSpans(QPainter& p, const LayerContext& c) {
  const int laneH = RowGeometry::kLaneHeight;
  p.setFont(c.spanFont);
  const QFontMetrics fm(c.spanFont);
  for (const FrameSpan& s : c.frame.spans) {
    const double x0 = std::max<double>(c.at.xOf(s.startNs), c.at.plot.left() - 1);
    const double x1 = std::min<double>(c.at.xOf(s.endNs), c.at.plot.right() + 2);
    const int left = static_cast<int>(std::floor(x0));
    const int width = std::max(1, static_cast<int>(std::floor(x1)) - left);
    const QRect r(left, c.rowTop(s.row) + 2, width, laneH - 3);
    // Interleaved schedules: the compute of each model chunk has its shade.
    const bool compute = c.rows[s.row].lane == trace_model::Lane::kCompute;
    const QColor kindColour = spanColour(s.kind, s.kernelCategory);
    const QColor fill = compute ? chunkShade(kindColour, s.chunk) : kindColour;
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
}

void paintKernelInstances(QPainter& p, const LayerContext& c) {
  if (c.overlay.kernelInstances == nullptr || c.overlay.kernelInstances->empty()) return;
  const int width = c.at.plot.width();
  // Frame row -> marked columns (rows of the frame only).
  std::map<int, std::vector<uint8_t>> marks;
  std::map<std::pair<int32_t, int32_t>, int> rowOf;
  for (int r = c.frame.firstRow; r <= c.frame.lastRow; ++r) {
    rowOf[{c.rows[r].rank, static_cast<int32_t>(c.rows[r].lane)}] = r;
  }
  for (const trace_model::Event& e : *c.overlay.kernelInstances) {
    auto row = rowOf.find({e.rank, timelineLaneOf(e)});
    if (row == rowOf.end()) continue;
    // Column k covers [k, k + 1) from the plot's left: the instance touches
    // floor(x0) .. ceil(x1) - 1, at least one column.
    const double x0 = c.at.xOf(e.startNs) - c.at.plot.left();
    const double x1 = c.at.xOf(e.endNs) - c.at.plot.left();
    const double first = std::floor(x0);
    const double last = std::max(first + 1, std::ceil(x1));
    if (last <= 0 || first >= width) continue;
    std::vector<uint8_t>& m = marks[row->second];
    if (m.empty()) m.assign(width, 0);
    const int a = static_cast<int>(std::max(first, 0.0));
    const int b = static_cast<int>(std::min(last, double(width)));
    std::fill(m.begin() + a, m.begin() + b, uint8_t{1});
  }
  // The text colour reads on every span colour (as the selected span's
  // outline); the highlight tint says "picked" over a wide span.
  const QColor edge = c.palette.color(QPalette::WindowText);
  QColor tint = c.palette.color(QPalette::Highlight);
  tint.setAlpha(110);
  const int laneH = RowGeometry::kLaneHeight;
  for (const auto& [r, m] : marks) {
    const int top = c.rowTop(r) + 1, h = laneH - 1;
    for (int col = 0; col < width;) {
      if (!m[col]) {
        ++col;
        continue;
      }
      int end = col;
      while (end < width && m[end]) ++end;
      const QRect run(c.at.plot.left() + col, top, end - col, h);
      if (run.width() <= 2) {
        p.fillRect(run, edge);
      } else {
        p.fillRect(run, tint);
        p.fillRect(QRect(run.left(), run.top(), run.width(), 2), edge);
        p.fillRect(QRect(run.left(), run.bottom() - 1, run.width(), 2), edge);
      }
      col = end;
    }
  }
}

// Between the pipeline lanes of the two ranks (their first lane without one).
void paintSendArrows(QPainter& p, const LayerContext& c) {
  const double mid = RowGeometry::kLaneHeight / 2.0;
  p.setRenderHint(QPainter::Antialiasing, true);
  p.setPen(QPen(arrowColour(c.palette), 1.2));
  for (const FrameArrow& a : c.frame.arrows) {
    auto from = c.rankRows.find(a.fromRank), to = c.rankRows.find(a.toRank);
    if (from == c.rankRows.end() || to == c.rankRows.end()) continue;
    const int fr = from->second.pipeline >= 0 ? from->second.pipeline : from->second.first;
    const int tr = to->second.pipeline >= 0 ? to->second.pipeline : to->second.first;
    paintArrow(p, QPointF(c.at.xOf(a.fromNs), c.rowTop(fr) + mid),
               QPointF(c.at.xOf(a.toNs), c.rowTop(tr) + mid));
  }
}

void paintHoverOutline(QPainter& p, const LayerContext& c) {
  if (!c.overlay.highlighted) return;
  const trace_model::Event& e = *c.overlay.highlighted;
  p.setPen(QPen(c.palette.color(QPalette::Highlight), 2));
  p.setBrush(Qt::NoBrush);
  forRowsOf(c, e, [&](int r) {
    const double x0 = c.at.xOf(e.startNs), x1 = c.at.xOf(e.endNs);
    p.drawRect(
        QRectF(x0 - 1, c.rowTop(r) + 1, std::max(2.0, x1 - x0 + 2), RowGeometry::kLaneHeight - 1));
  });
}

// A thick outline in the text colour with a highlight halo, visible on every
// span colour and in both palettes.
void paintSelectedSpan(QPainter& p, const LayerContext& c) {
  if (!c.overlay.selected) return;
  const trace_model::Event& e = *c.overlay.selected;
  p.setBrush(Qt::NoBrush);
  forRowsOf(c, e, [&](int r) {
    const double x0 = c.at.xOf(e.startNs), x1 = c.at.xOf(e.endNs);
    const QRectF box(x0 - 2, c.rowTop(r), std::max(3.0, x1 - x0 + 4), RowGeometry::kLaneHeight + 1);
    p.setPen(QPen(c.palette.color(QPalette::Highlight), 4));
    p.drawRect(box);
    p.setPen(QPen(c.palette.color(QPalette::WindowText), 2));
    p.drawRect(box);
  });
}

// The selected span's launch call or GPU records (same correlation id),
// outlined, with an arrow from the launch's start on its cuda api row to each
// record's start on its stream row, as Nsight and Perfetto draw it.
void paintLinkedRecords(QPainter& p, const LayerContext& c) {
  if (!c.overlay.selected || c.overlay.linked.empty()) return;
  const int laneH = RowGeometry::kLaneHeight;
  auto rowOf = [&](const trace_model::Event& e) {
    for (int r = 0; r < static_cast<int>(c.rows.size()); ++r) {
      if (c.rows[r].rank == e.rank && static_cast<int32_t>(c.rows[r].lane) == timelineLaneOf(e))
        return r;
    }
    return -1;
  };
  p.setRenderHint(QPainter::Antialiasing, true);
  p.setBrush(Qt::NoBrush);
  p.setPen(QPen(c.palette.color(QPalette::Highlight), 2));
  for (const trace_model::Event& other : c.overlay.linked) {
    const bool otherIsRecord = trace_model::isGpuStreamLane(other.lane);
    const trace_model::Event& launch = otherIsRecord ? *c.overlay.selected : other;
    const trace_model::Event& record = otherIsRecord ? other : *c.overlay.selected;
    const int from = rowOf(launch), to = rowOf(record);
    if (from < 0 || to < 0) continue;
    const int r = rowOf(other);
    const double x0 = c.at.xOf(other.startNs), x1 = c.at.xOf(other.endNs);
    p.drawRect(QRectF(x0 - 1, c.rowTop(r) + 1, std::max(2.0, x1 - x0 + 2), laneH - 1));
    paintArrow(p, QPointF(c.at.xOf(launch.startNs), c.rowTop(from) + laneH / 2.0),
               QPointF(c.at.xOf(record.startNs), c.rowTop(to) + laneH / 2.0));
  }
}

void paintSelectionBand(QPainter& p, const LayerContext& c) {
  if (!c.overlay.selectionNs) return;
  const auto [a, b] = *c.overlay.selectionNs;
  const double x0 = c.at.xOf(std::min(a, b)), x1 = c.at.xOf(std::max(a, b));
  QColor band = c.palette.color(QPalette::Highlight);
  band.setAlpha(50);
  p.fillRect(QRectF(x0, c.at.plot.top(), x1 - x0, c.at.plot.height()), band);
  p.setPen(c.palette.color(QPalette::Highlight));
  p.drawLine(QPointF(x0, c.at.plot.top()), QPointF(x0, c.at.plot.bottom()));
  p.drawLine(QPointF(x1, c.at.plot.top()), QPointF(x1, c.at.plot.bottom()));
}

LabelColumns labelColumns(const QFont& spanFont, const std::vector<TimelineRow>& rows,
                          int labelWidth) {
  const QFontMetrics fm(spanFont);
  int widest = 0;
  for (const TimelineRow& row : rows) widest = std::max(widest, fm.horizontalAdvance(row.laneLabel));
  // The lane names get what they need, up to 3/5 of the column; the rank
  // label (on the first row of a rank only) the rest.
  const int lane = std::min(widest + 2, labelWidth * 3 / 5);
  LabelColumns out;
  out.lane = QRect(labelWidth - 6 - lane, 0, lane, RowGeometry::kLaneHeight);
  out.rank = QRect(6, 0, std::max(0, out.lane.left() - 6 - 6), RowGeometry::kLaneHeight);
  return out;
}

namespace {

void paintLabelsNow(QPainter& p, const LayerContext& c) {
  const int laneH = RowGeometry::kLaneHeight;
  const QRect labels(0, c.at.plot.top(), c.at.plot.left(), c.at.plot.height());
  const LabelColumns columns = labelColumns(c.spanFont, c.rows, c.at.plot.left());
  const QFontMetrics labelMetrics(c.labelFont), laneMetrics(c.spanFont);
  p.fillRect(labels, c.palette.window());
  p.setClipRect(labels);
  const auto& marked = c.overlay.markedRanks;
  for (int r = c.frame.firstRow; r <= c.frame.lastRow; ++r) {
    const TimelineRow& row = c.rows[r];
    const int y = c.rowTop(r);
    if (row.firstOfStage) {
      p.setPen(c.palette.color(QPalette::Mid));
      p.drawLine(0, y - 3, c.at.plot.right(), y - 3);
    }
    if (std::find(marked.begin(), marked.end(), row.rank) != marked.end()) {
      QColor mark = c.palette.color(QPalette::Highlight);
      mark.setAlpha(70);
      p.fillRect(QRect(0, y, c.at.plot.left(), laneH), mark);
    }
    p.setPen(c.palette.color(QPalette::WindowText));
    p.setFont(c.labelFont);
    // Never clipped: a name too long for its column loses its middle (the
    // view's tooltip gives it whole).
    if (row.firstOfRank) {
      const QRect rank = columns.rank.translated(0, y);
      p.drawText(rank, Qt::AlignVCenter | Qt::AlignLeft,
                 labelMetrics.elidedText(row.rankLabel, Qt::ElideMiddle, rank.width()));
    }
    p.setPen(c.palette.color(QPalette::PlaceholderText));
    p.setFont(c.spanFont);
    const QRect lane = columns.lane.translated(0, y);
    p.drawText(lane, Qt::AlignVCenter | Qt::AlignRight,
               laneMetrics.elidedText(row.laneLabel, Qt::ElideMiddle, lane.width()));
  }
}

}  // namespace

// With the caller's cache, onto pixels: the column is painted into an image
// once and copied while its key holds (text layout is most of a frame's
// label cost).
void paintLabels(QPainter& p, const LayerContext& c) {
  TimelinePaintCache* cache = c.overlay.cache;
  const QRect labels(0, c.at.plot.top(), c.at.plot.left(), c.at.plot.height());
  // Only onto pixels: an SVG export keeps its labels as text.
  const bool raster =
      p.paintEngine() != nullptr && p.paintEngine()->type() == QPaintEngine::Raster;
  if (cache == nullptr || !raster || labels.isEmpty()) {
    paintLabelsNow(p, c);
    return;
  }
  const qreal dpr = p.device() != nullptr ? p.device()->devicePixelRatioF() : 1.0;
  QString key = QStringLiteral("%1 %2 %3 %4 %5 %6 %7 %8 %9")
                    .arg(c.frame.firstRow)
                    .arg(c.frame.lastRow)
                    .arg(c.at.scrollY)
                    .arg(c.at.plot.top())
                    .arg(c.at.plot.left())
                    .arg(c.at.plot.height())
                    .arg(c.at.plot.right())
                    .arg(dpr)
                    .arg(c.palette.cacheKey());
  key += c.labelFont.key() + c.spanFont.key();
  for (int32_t rank : c.overlay.markedRanks) key += QStringLiteral(" m%1").arg(rank);
  if (cache->labelsKey != key || cache->labels.isNull()) {
    // Opaque: the column is filled before anything is drawn on it.
    QImage image((QSizeF(labels.right() + 1, labels.bottom() + 1) * dpr).toSize(),
                 QImage::Format_RGB32);
    image.setDevicePixelRatio(dpr);
    image.fill(c.palette.window().color());
    QPainter ip(&image);
    ip.setRenderHints(p.renderHints());
    ip.setFont(p.font());
    paintLabelsNow(ip, c);
    ip.end();
    cache->labels = std::move(image);
    cache->labelsKey = std::move(key);
  }
  p.drawImage(QRectF(labels), cache->labels,
              QRectF(labels.left() * dpr, labels.top() * dpr, labels.width() * dpr,
                     labels.height() * dpr));
}

void paintRuler(QPainter& p, const LayerContext& c) {
  const TimelinePlacement& at = c.at;
  const QRect ruler(at.plot.left(), 0, at.plot.width(), TimelinePlacement::kRulerHeight);
  p.fillRect(QRect(0, 0, at.plot.right() + 1, ruler.height()), c.palette.window());
  p.setPen(c.palette.color(QPalette::Mid));
  p.drawLine(0, ruler.bottom(), at.plot.right(), ruler.bottom());
  p.setPen(c.palette.color(QPalette::WindowText));
  p.setFont(c.rulerFont);
  const QFontMetrics fm = p.fontMetrics();
  const RulerLayout layout =
      rulerLayout(at, [&fm](const QString& text) { return fm.horizontalAdvance(text); });
  for (const RulerTick& t : layout.ticks) {
    p.drawLine(QPointF(t.x, ruler.bottom() - (t.major ? 6 : 3)), QPointF(t.x, ruler.bottom()));
    if (!t.label.isEmpty()) p.drawText(QPointF(t.x + 3, ruler.bottom() - 8), t.label);
  }
  if (c.overlay.steps == nullptr) return;
  // Step marks (ruler_ticks.h): a line per step, none through a label.
  p.setPen(stepMarkColour(c.palette));
  const auto marks = stepMarks(at, *c.overlay.steps,
                               [&fm](const QString& text) { return fm.horizontalAdvance(text); });
  for (const StepMark& m : marks) {
    if (!m.underLabel) p.drawLine(QPointF(m.x, 0), QPointF(m.x, 13));
    if (!m.label.isEmpty()) p.drawText(QPointF(m.x + kStepLabelOffsetPx, 11), m.label);
  }
}

void paintSelectionLength(QPainter& p, const LayerContext& c) {
  if (!c.overlay.selectionNs) return;
  const auto [a, b] = *c.overlay.selectionNs;
  p.setFont(c.rulerFont);
  const QString text = QStringLiteral("Δ %1").arg(formatDuration(std::fabs(b - a)));
  const double x = c.at.xOf(std::min(a, b));
  const QRect box(static_cast<int>(x) + 4, 2, p.fontMetrics().horizontalAdvance(text) + 10, 18);
  p.fillRect(box, c.palette.color(QPalette::Highlight));
  p.setPen(c.palette.color(QPalette::HighlightedText));
  p.drawText(box, Qt::AlignCenter, text);
}

void paintNote(QPainter& p, const LayerContext& c) {
  if (c.frame.note.isEmpty()) return;
  p.setFont(c.rulerFont);
  // On a box of the window's colour: the note sits over the spans ("loading
  // spans" over a dense overview was grey on colour, unreadable).
  const QFontMetrics fm = p.fontMetrics();
  const int w = std::min(fm.horizontalAdvance(c.frame.note) + 10, c.at.plot.width() - 4);
  const QRect box(c.at.plot.right() - 4 - w, c.at.plot.top() + 2, w, fm.height() + 2);
  p.fillRect(box, c.palette.color(QPalette::Window));
  p.setPen(c.palette.color(QPalette::Mid));
  p.drawRect(box.adjusted(0, 0, -1, -1));
  p.setPen(c.palette.color(QPalette::WindowText));
  p.drawText(box, Qt::AlignCenter, fm.elidedText(c.frame.note, Qt::ElideRight, w - 6));
}

}  // namespace bubblescope::gui
