#include "gui/tool_icons.h"

#include <QPainter>
#include <QPainterPath>
#include <QPixmap>

namespace bubblescope::gui {
namespace {

// Relative luminance 0.21 and 0.20: 3.6:1 and 3.7:1 against the light
// palette's window (#efefef), 3.3:1 and 3.2:1 against the dark one's.
const QColor kRunGreen(0x38, 0x8e, 0x3c);
const QColor kStopRed(0xe5, 0x39, 0x35);

// `shape` (in a 16 x 16 box) filled with `colour`, at the sizes toolbars
// and menus ask for.
QIcon iconOf(const QPainterPath& shape, const QColor& colour) {
  QIcon icon;
  for (int side : {16, 24, 32, 48}) {
    QPixmap pixmap(side, side);
    pixmap.fill(Qt::transparent);
    QPainter p(&pixmap);
    p.setRenderHint(QPainter::Antialiasing);
    p.scale(side / 16.0, side / 16.0);
    p.setPen(Qt::NoPen);
    p.setBrush(colour);
    p.drawPath(shape);
    p.end();
    icon.addPixmap(pixmap);
  }
  return icon;
}

}  // namespace

QIcon runIcon() {
  QPainterPath triangle;
  triangle.moveTo(3, 2);
  triangle.lineTo(14, 8);
  triangle.lineTo(3, 14);
  triangle.closeSubpath();
  return iconOf(triangle, kRunGreen);
}

QIcon stopIcon() {
  QPainterPath square;
  square.addRoundedRect(QRectF(3, 3, 10, 10), 1.5, 1.5);
  return iconOf(square, kStopRed);
}

}  // namespace bubblescope::gui
