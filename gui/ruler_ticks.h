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
#include "trace_model/step_window.h"

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

// The step marks along the ruler's top: a line at each step's start at
// least kStepLineGapPx from the previous one, and "step N" right of the line
// where it fits (kStepLabelGapPx after the previous label, inside the plot).
// A step whose line would run through a label is marked `underLabel` and
// drawn without its line: lines never cross a label's text.
struct StepMark {
  double x = 0;
  QString label;            // empty: no label at this step
  bool underLabel = false;  // under the previous label: no line
};
inline constexpr double kStepLineGapPx = 4;
inline constexpr double kStepLabelGapPx = 14;
inline constexpr int kStepLabelOffsetPx = 3;  // the label starts this far right of its line
std::vector<StepMark> stepMarks(const TimelinePlacement& at,
                                const std::vector<trace_model::StepWindow>& steps,
                                const std::function<int(const QString&)>& widthOf);

}  // namespace bubblescope::gui
