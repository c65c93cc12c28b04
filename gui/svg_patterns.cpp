#include "gui/svg_patterns.h"

#include <QMap>
#include <QRegularExpression>
#include <QString>

namespace bubblescope::gui {

QByteArray inlinePatternMasks(const QByteArray& svg) {
  QString text = QString::fromUtf8(svg);
  // <mask id="patternmaskN" ...> pixel rects </mask>
  static const QRegularExpression maskRe(
      QStringLiteral(R"re(<mask id="([^"]+)"[^>]*>(.*?)</mask>\s*)re"),
      QRegularExpression::DotMatchesEverythingOption);
  QMap<QString, QString> masks;
  for (auto it = maskRe.globalMatch(text); it.hasNext();) {
    const QRegularExpressionMatch m = it.next();
    masks.insert(m.captured(1), m.captured(2).trimmed());
  }
  if (masks.isEmpty()) return svg;
  // The pattern's rect: <rect x=.. y=.. width=.. height=.. ATTRS mask="url(#ID)" />
  static const QRegularExpression rectRe(QStringLiteral(
      R"re(<rect\s+x="[^"]*"\s+y="[^"]*"\s+width="[^"]*"\s+height="[^"]*"([^>]*?)\s*mask="url\(#([^)"]+)\)"\s*/>)re"));
  QString out;
  qsizetype last = 0;
  for (auto it = rectRe.globalMatch(text); it.hasNext();) {
    const QRegularExpressionMatch m = it.next();
    const auto mask = masks.constFind(m.captured(2));
    if (mask == masks.constEnd()) continue;
    out += QStringView(text).mid(last, m.capturedStart() - last);
    out += QStringLiteral("<g%1>\n%2\n</g>").arg(m.captured(1), *mask);
    last = m.capturedEnd();
  }
  out += QStringView(text).mid(last);
  out.remove(maskRe);
  return out.toUtf8();
}

}  // namespace bubblescope::gui
