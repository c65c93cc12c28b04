#include "gui/detail_panel.h"

#include "gui/span_palette.h"
#include "gui/time_format.h"

namespace bubblescope::gui {

DetailPanel::DetailPanel(QWidget* parent) : QLabel(parent) {
  setAlignment(Qt::AlignTop | Qt::AlignLeft);
  setTextFormat(Qt::RichText);
  setTextInteractionFlags(Qt::TextSelectableByMouse);
  setWordWrap(true);
  setMinimumWidth(220);
  setMargin(8);
  clearDetails();
}

void DetailPanel::clearDetails() {
  clearSelection();
  clearSpan();
}

void DetailPanel::clearSpan() {
  eventText_ = tr("<i>Click a span to see its details. Shift-drag to measure an interval.</i>");
  refresh();
}

void DetailPanel::clearSelection() {
  selectionText_.clear();
  refresh();
}

void DetailPanel::showSpan(const trace_model::Event& e, int64_t originNs) {
  auto row = [](const QString& k, const QString& v) {
    return QStringLiteral("<tr><td style='color:gray;padding-right:8px'>%1</td><td>%2</td></tr>")
        .arg(k, v);
  };
  auto opt = [](int32_t v) { return v >= 0 ? QString::number(v) : QStringLiteral("–"); };
  QString t = QStringLiteral("<b>%1</b><br><span style='color:%2'>■</span> %3<table>")
                  .arg(QString::fromStdString(e.name).toHtmlEscaped(), eventColour(e).name(),
                       eventLabel(e));
  t += row(tr("rank"), QString::number(e.rank));
  t += row(tr("lane"), QString::fromUtf8(trace_model::toString(e.lane).data(),
                                         int(trace_model::toString(e.lane).size())));
  t += row(tr("start"), formatDuration(double(e.startNs - originNs)));
  t += row(tr("duration"), formatDuration(double(e.endNs - e.startNs)));
  t += row(tr("step"), opt(e.step));
  t += row(tr("micro-batch"), opt(e.microBatch));
  t += row(tr("stage"), opt(e.stage));
  t += row(tr("chunk"), opt(e.chunk));
  if (e.dim != trace_model::ParallelDim::kNone) {
    const auto dim = trace_model::toString(e.dim);
    t += row(tr("dimension"), QString::fromUtf8(dim.data(), int(dim.size())));
  }
  if (e.peer >= 0) t += row(tr("peer"), QString::number(e.peer));
  if (e.correlationId != 0) t += row(tr("correlation"), QString::number(e.correlationId));
  if (e.bytes > 0) t += row(tr("bytes"), formatBytes(e.bytes));
  if (e.flops > 0) {
    t += row(tr("flops"), QString::number(double(e.flops), 'g', 4));
    if (e.endNs > e.startNs) {
      t += row(tr("GFLOP/s"),
               QString::number(double(e.flops) / double(e.endNs - e.startNs), 'f', 2));
    }
  }
  t += QStringLiteral("</table>");
  eventText_ = t;
  refresh();
}

void DetailPanel::showSelection(double t0Ns, double t1Ns, int64_t originNs) {
  selectionText_ = tr("<b>Selection</b> Δ %1<br>from %2 to %3<hr>")
                       .arg(formatDuration(t1Ns - t0Ns), formatDuration(t0Ns - originNs),
                            formatDuration(t1Ns - originNs));
  refresh();
}

void DetailPanel::refresh() {
  setText(selectionText_ + eventText_);
}

}  // namespace bubblescope::gui
