// Export of a timeline as a picture to share: a title line (the run), the
// legend, then the view's ruler and rows as drawn, cut below the last row (no
// empty area). PNG or SVG by the path's suffix; SVG needs a build with Qt SVG
// (else Unsupported) and its hatch patterns are written without masks
// (svg_patterns.h) so that every renderer draws them.
#pragma once

#include <QSize>
#include <QString>

#include "common/status.h"

namespace bubblescope::gui {

class TimelineView;

// The size of the picture exportTimeline() writes for `view`.
QSize timelinePictureSize(const TimelineView* view);
Status exportTimeline(TimelineView* view, const QString& title, const QString& path);

}  // namespace bubblescope::gui
