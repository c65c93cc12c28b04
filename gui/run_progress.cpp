#include "gui/run_progress.h"

#include <QLocale>
#include <QRegularExpression>

namespace bubblescope::gui {

std::optional<RunProgress> parseProgressLine(const QString& line) {
  static const QRegularExpression stepRe(QStringLiteral("\\bstep\\s+(\\d+)\\s*/\\s*(\\d+)"));
  static const QRegularExpression lossRe(
      QStringLiteral("\\bloss\\s+([-+]?(?:\\d+\\.?\\d*(?:[eE][-+]?\\d+)?|nan|inf))"),
      QRegularExpression::CaseInsensitiveOption);
  static const QRegularExpression tokRe(QStringLiteral("([\\d.]+(?:[eE][-+]?\\d+)?)\\s*tok/s"));
  const QRegularExpressionMatch step = stepRe.match(line);
  if (!step.hasMatch()) return std::nullopt;
  RunProgress p;
  p.step = step.captured(1).toInt();
  p.steps = step.captured(2).toInt();
  if (const auto m = lossRe.match(line, step.capturedEnd()); m.hasMatch()) {
    bool ok = false;
    const double v = m.captured(1).toDouble(&ok);
    if (ok) p.loss = v;
  }
  if (const auto m = tokRe.match(line, step.capturedEnd()); m.hasMatch()) {
    bool ok = false;
    const double v = m.captured(1).toDouble(&ok);
    if (ok) p.tokensPerS = v;
  }
  return p;
}

QString progressText(const RunProgress& p) {
  QString text = QStringLiteral("step %1/%2").arg(p.step).arg(p.steps);
  if (p.loss) text += QStringLiteral(" · loss %1").arg(*p.loss, 0, 'f', 4);
  if (p.tokensPerS) {
    text += QStringLiteral(" · %1 tok/s").arg(QLocale().toString(*p.tokensPerS, 'f', 0));
  }
  return text;
}

}  // namespace bubblescope::gui
