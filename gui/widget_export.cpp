#include "gui/widget_export.h"

#include <QPainter>
#include <QPixmap>
#include <QWidget>

#if BUBBLESCOPE_WITH_SVG
#include <QSvgGenerator>
#endif

namespace bubblescope::gui {

Status exportWidget(QWidget* widget, const QString& path) {
  bool ok = false;
  if (path.endsWith(".svg", Qt::CaseInsensitive)) {
#if BUBBLESCOPE_WITH_SVG
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(widget->size());
    svg.setViewBox(widget->rect());
    svg.setTitle(widget->windowTitle());
    QPainter painter;
    ok = painter.begin(&svg);
    if (ok) {
      widget->render(&painter);
      ok = painter.end();
    }
#else
    return Status::unsupported("this build has no Qt SVG: export to .png instead");
#endif
  } else {
    ok = widget->grab().save(path);
  }
  if (!ok) return Status::ioError("cannot write " + path.toStdString());
  return Status::ok();
}

}  // namespace bubblescope::gui
