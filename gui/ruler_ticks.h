// The time ruler's ticks and labels for one placement: pure layout, no
// painting, so that "labels never overlap" is testable without pixels.
//
// Ticks are a 1-2-5 step at least 90 px apart (niceTickNs), counted from the
// placement's origin; labels share one unit (formatTickLabel), the origin
// reads "0", and when labels are wider than the tick spacing only every
// k-th tick (k counted from the origin, so they stay put while panning)
// carries one. A label that would run past the plot's right edge is left out.
#pragma once

#include <QString>
#include <functional>
#include <vector>

#include "gui/timeline_painter.h"

namespace bubblescope::gui {

struct RulerTick {
  double x = 0;  // widget x of the tick
  bool major = true;
  QString label;  // empty: no label on this tick
};

struct RulerLayout {
  double tickNs = 1;
  std::vector<RulerTick> ticks;  // left to right, inside the plot
};

// widthOf: the painted width of a label in pixels (the ruler font's metrics).
RulerLayout rulerLayout(const TimelinePlacement& at,
                        const std::function<int(const QString&)>& widthOf);

}  // namespace bubblescope::gui
