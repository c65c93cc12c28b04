#include "gui/grad_compression_text.h"

#include <QObject>
#include <cmath>

#include "gui/time_format.h"

namespace bubblescope::gui {

namespace {

// The dimension of the report's CommVolume the dp gradients travel in.
constexpr const char* kDataParallelDim = "dp+zero";

QString bytes(std::optional<double> b) {
  return b ? formatBytes(std::llround(*b)) : QStringLiteral("-");
}

// The long form names the uncompressed bytes; the short one (a line per
// compared run) only what was sent and the ratio.
QString figuresText(const GradCompressionFigures& f, bool longForm) {
  if (!f.sentBytesPerStep) return QObject::tr("no data-parallel gradient traffic");
  QString text = longForm ? QObject::tr("%1/step per rank sent").arg(bytes(f.sentBytesPerStep))
                          : QObject::tr("%1/step sent").arg(bytes(f.sentBytesPerStep));
  if (longForm && f.uncompressedBytesPerStep) {
    text += QObject::tr(" against the uncompressed %1").arg(bytes(f.uncompressedBytesPerStep));
  }
  if (const auto r = f.ratio()) {
    text +=
        (longForm ? QObject::tr(" (ratio %1×)") : QObject::tr(", ratio %1×")).arg(*r, 0, 'f', 2);
  }
  return text;
}

}  // namespace

std::optional<double> GradCompressionFigures::ratio() const {
  if (!sentBytesPerStep || !uncompressedBytesPerStep || !(*sentBytesPerStep > 0)) {
    return std::nullopt;
  }
  return *uncompressedBytesPerStep / *sentBytesPerStep;
}

std::optional<GradCompressionFigures> gradCompressionFigures(const analysis::RunReport& report) {
  if (!report.layout) return std::nullopt;
  GradCompressionFigures f;
  f.spec = QString::fromStdString(report.layout->gradCompression.toString());
  for (const analysis::CommVolume& v : report.commVolume) {
    if (v.dim != kDataParallelDim) continue;
    f.sentBytesPerStep = v.measuredBytesPerStep;
    f.uncompressedBytesPerStep = v.formulaBytesPerStep;
  }
  return f;
}

QString gradCompressionHtml(const analysis::RunReport& report) {
  const auto f = gradCompressionFigures(report);
  if (!f || !report.layout->gradCompression.compresses()) return {};
  return QObject::tr("<b>Grad compression</b> %1: %2<br>")
      .arg(f->spec.toHtmlEscaped(), figuresText(*f, true));
}

QString comparedCompressionHtml(const std::vector<analysis::RunReport>& reports) {
  QString html;
  for (const analysis::RunReport& r : reports) {
    const auto f = gradCompressionFigures(r);
    if (!f) continue;
    html += QObject::tr("<b>Run %1</b> %2: %3<br>")
                .arg(r.run.id)
                .arg(f->spec.toHtmlEscaped(), figuresText(*f, false));
  }
  return html;
}

}  // namespace bubblescope::gui
