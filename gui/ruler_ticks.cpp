#include "gui/ruler_ticks.h"

#include <algorithm>
#include <cmath>

#include "gui/time_format.h"

namespace bubblescope::gui {

namespace {
constexpr double kMinTickPx = 90;
constexpr int kLabelGapPx = 12;  // between the end of a label and the next
constexpr int kLabelOffsetPx = 3;
}  // namespace

RulerLayout rulerLayout(const TimelinePlacement& at,
                        const std::function<int(const QString&)>& widthOf) {
  RulerLayout out;
  const double nsPerPx = (at.t1Ns - at.t0Ns) / std::max(1, at.plot.width());
  const double tick = niceTickNs(nsPerPx * kMinTickPx);
  out.tickNs = tick;
  const double rel0 = at.t0Ns - static_cast<double>(at.originNs);
  const double rel1 = at.t1Ns - static_cast<double>(at.originNs);
  const auto firstTick = static_cast<int64_t>(std::ceil(rel0 / tick));
  const auto lastTick = static_cast<int64_t>(std::floor(rel1 / tick));
  const double maxAbs = std::max(std::fabs(rel0), std::fabs(rel1));
  int widest = 0;
  for (int64_t k = firstTick; k <= lastTick; ++k)
    widest = std::max(widest, widthOf(formatTickLabel(k * tick, tick, maxAbs)));
  const double tickPx = tick / nsPerPx;
  const auto every =
      std::max<int64_t>(1, static_cast<int64_t>(std::ceil((widest + kLabelGapPx) / tickPx)));
  auto xOf = [&](double rel) { return at.xOf(rel + static_cast<double>(at.originNs)); };
  for (int64_t k = firstTick - 1; k <= lastTick; ++k) {
    const double t = k * tick;
    if (k >= firstTick) {
      RulerTick major{xOf(t), true, {}};
      if (k % every == 0) {
        const QString label = formatTickLabel(t, tick, maxAbs);
        if (major.x + kLabelOffsetPx + widthOf(label) <= at.plot.right()) major.label = label;
      }
      out.ticks.push_back(std::move(major));
    }
    for (int i = 1; i < 5; ++i) {
      const double x = xOf(t + i * tick / 5);
      if (x >= at.plot.left() && x <= at.plot.right()) out.ticks.push_back({x, false, {}});
    }
  }
  return out;
}

std::vector<StepMark> stepMarks(const TimelinePlacement& at,
                                const std::vector<trace_model::StepWindow>& steps,
                                const std::function<int(const QString&)>& widthOf) {
  std::vector<StepMark> out;
  double lastLine = -1e9, lastLabelEnd = -1e9;
  for (const trace_model::StepWindow& s : steps) {
    const double x = at.xOf(static_cast<double>(s.startNs));
    if (x < at.plot.left() || x > at.plot.right()) continue;
    if (x - lastLine < kStepLineGapPx) continue;
    lastLine = x;
    StepMark mark{x, {}, x <= lastLabelEnd + 1};  // a pixel clear of the text
    // A label is measured only where one may go (zoomed out, most marks
    // fall inside the last label: no text to lay out for them).
    if (x > lastLabelEnd + kStepLabelGapPx) {
      const QString label = QStringLiteral("step %1").arg(s.step);
      const int w = widthOf(label);
      if (x + kStepLabelOffsetPx + w <= at.plot.right()) {
        mark.label = label;
        lastLabelEnd = x + kStepLabelOffsetPx + w;
      }
    }
    out.push_back(std::move(mark));
  }
  return out;
}

}  // namespace bubblescope::gui
