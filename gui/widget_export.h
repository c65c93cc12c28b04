// Export of a widget as it is drawn (the timeline, a compare view) to PNG or
// SVG, chosen by the file's suffix. SVG renders the widget through
// QSvgGenerator, so what QPainter draws stays vector.
#pragma once

#include <QString>

#include "common/status.h"

class QWidget;

namespace bubblescope::gui {

Status exportWidget(QWidget* widget, const QString& path);

}  // namespace bubblescope::gui
