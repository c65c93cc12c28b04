// Export of a widget as it is drawn (the timeline, a compare view) to PNG or
// SVG, chosen by the file's suffix. SVG renders the widget through
// QSvgGenerator, so what QPainter draws stays vector; a build without Qt SVG
// (BUBBLESCOPE_WITH_SVG unset) returns Unsupported for .svg. Hatch patterns
// are written without masks (svg_patterns.h). The timeline itself exports
// through timeline_export.h (title, legend, cropped rows).
#pragma once

#include <QSize>
#include <QString>
#include <functional>

#include "common/status.h"

class QPainter;
class QWidget;

namespace bubblescope::gui {

Status exportWidget(QWidget* widget, const QString& path);
// Writes what `paint` draws on a `size` canvas to PNG or SVG (by the path's
// suffix; SVG titled `title`, its hatch patterns without masks).
Status writePicture(const QString& path, QSize size, const QString& title,
                    const std::function<void(QPainter&)>& paint);

}  // namespace bubblescope::gui
