#include "gui/run_details_html.h"

#include <QObject>
#include <QStringList>
#include <cmath>

#include "engine/layout/layout.h"
#include "gui/grad_compression_text.h"
#include "gui/time_format.h"

namespace bubblescope::gui {

QString runDetailsHtml(const analysis::RunReport& report) {
  auto ms = [](std::optional<double> ns) {
    return ns ? QString::number(*ns / 1e6, 'f', 2) : QStringLiteral("-");
  };
  // No step time (a trace that marks no step): said so, not "mean - ms".
  QString html = report.stepTimeMeanNs
                     ? QObject::tr("<b>Measured step time</b> mean %1 ms · min %2 · max %3 · std %4<br>")
                           .arg(ms(report.stepTimeMeanNs), ms(report.stepTimeMinNs),
                                ms(report.stepTimeMaxNs), ms(report.stepTimeStdNs))
                     : QObject::tr("<b>Measured step time</b> none: the trace marks no step<br>");
  // The ideal-hardware replay of an oversubscribed run: its step and its
  // bubble per stage, which the report's note below explains.
  QStringList replayed;
  for (const auto& s : report.stages) {
    if (s.bubbleReplayed) replayed << QStringLiteral("%1%").arg(*s.bubbleReplayed * 100, 0, 'f', 1);
  }
  if (report.replayedStepNs || !replayed.isEmpty()) {
    html += QObject::tr("<b>Replayed on ideal hardware</b> (one core per rank) step %1 ms")
                .arg(ms(report.replayedStepNs));
    if (!replayed.isEmpty()) html += QObject::tr(" · bubble per stage %1").arg(replayed.join(" · "));
    html += "<br>";
  }
  if (report.stages.size() > 1 && !report.stages.front().bubbleFormulaText.empty()) {
    html +=
        QObject::tr("<b>Bubble formula</b> %1<br>")
            .arg(QString::fromStdString(report.stages.front().bubbleFormulaText).toHtmlEscaped());
  }
  for (const auto& v : report.commVolume) {
    html += QObject::tr("<b>Comm %1</b> %2/step per rank")
                .arg(QString::fromStdString(v.dim))
                .arg(formatBytes(std::llround(v.measuredBytesPerStep)));
    if (v.formulaBytesPerStep)
      html += QObject::tr(" (formula %1)").arg(formatBytes(std::llround(*v.formulaBytesPerStep)));
    html += "<br>";
  }
  html += gradCompressionHtml(report);
  if (report.layout && report.layout->emulatesInterNodeLink()) {  // as `report` says it
    html += QStringLiteral("<i>%1</i><br>")
                .arg(QString::fromStdString(layout::interNodeLinkLine(*report.layout)));
  }
  for (const auto& s : report.stragglers) {
    html += QObject::tr("<b>Straggler</b> rank %1: %2, late %3 of %4 steps by %5 ms<br>")
                .arg(s.rank)
                .arg(QString::fromStdString(s.reason))
                .arg(s.lateSteps)
                .arg(s.steps)
                .arg(s.lateNsMean / 1e6, 0, 'f', 2);
  }
  for (const std::string& note : report.notes)
    html += QStringLiteral("<i>%1</i><br>").arg(QString::fromStdString(note).toHtmlEscaped());
  return html;
}

}  // namespace bubblescope::gui
