#include "gui/widget_export.h"

#include <QBuffer>
#include <QFile>
#include <QImage>
#include <QPainter>
#include <QWidget>

#if BUBBLESCOPE_WITH_SVG
#include <QSvgGenerator>
#endif

#include "gui/svg_patterns.h"

namespace bubblescope::gui {

Status writePicture(const QString& path, QSize size, const QString& title,
                    const std::function<void(QPainter&)>& paint) {
  bool ok = false;
  if (path.endsWith(".svg", Qt::CaseInsensitive)) {
#if BUBBLESCOPE_WITH_SVG
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    QSvgGenerator svg;
    svg.setOutputDevice(&buffer);
    svg.setSize(size);
    svg.setViewBox(QRect(QPoint(0, 0), size));
    svg.setTitle(title);
    QPainter painter;
    ok = painter.begin(&svg);
    if (ok) {
      paint(painter);
      ok = painter.end();
    }
    const QByteArray text = inlinePatternMasks(buffer.data());
    QFile file(path);
    ok = ok && file.open(QIODevice::WriteOnly | QIODevice::Truncate) &&
         file.write(text) == text.size();
#else
    return Status::unsupported("this build has no Qt SVG: export to .png instead");
#endif
  } else {
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    QPainter painter(&image);
    paint(painter);
    painter.end();
    ok = image.save(path);
  }
  if (!ok) return Status::ioError("cannot write " + path.toStdString());
  return Status::ok();
}

Status exportWidget(QWidget* widget, const QString& path) {
  return writePicture(path, widget->size(), widget->windowTitle(),
                      [widget](QPainter& p) { widget->render(&p); });
}

}  // namespace bubblescope::gui
