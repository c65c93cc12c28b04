// The toolbar's Run and Stop icons, drawn here rather than taken from the
// style: Fusion's media icons are dark glyphs that vanish on a dark palette.
// A green triangle and a red square, each of a colour that keeps a contrast
// of at least 3:1 (WCAG's for graphics) against both the light palette's
// window (#efefef) and the dark one's (#2d2d30).
#pragma once

#include <QIcon>

namespace bubblescope::gui {

QIcon runIcon();
QIcon stopIcon();

}  // namespace bubblescope::gui
