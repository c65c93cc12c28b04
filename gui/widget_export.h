// Export of a widget as it is drawn (the timeline, a compare view) to PNG or
// SVG, chosen by the file's suffix. SVG renders the widget through
// QSvgGenerator, so what QPainter draws stays vector; a build without Qt SVG
// (BUBBLESCOPE_WITH_SVG unset) returns Unsupported for .svg.
#pragma once

#include <QString>

#include "common/status.h"

class QWidget;

namespace bubblescope::gui {

Status exportWidget(QWidget* widget, const QString& path);

}  // namespace bubblescope::gui
