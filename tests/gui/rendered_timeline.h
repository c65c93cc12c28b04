// A timeline view rendered offscreen for pixel tests: the image, where the
// plot lies (TimelinePlacement) and where each row lies (RowGeometry).
#pragma once

#include <QImage>

#include "gui/timeline_view.h"

namespace bubblescope::gui::testing_render {

struct Rendered {
  QImage image;
  TimelinePlacement at;
  RowGeometry rows;
};

// Shows [t0Ns, t1Ns) in `view` (sized by the caller) and renders it.
inline Rendered renderView(TimelineView& view, double t0Ns, double t1Ns) {
  view.setViewRange(t0Ns, t1Ns);
  Rendered out;
  out.image = QImage(view.size(), QImage::Format_ARGB32);
  view.render(&out.image);
  out.at = view.placement();
  out.rows = view.rowGeometry();
  return out;
}

// `model` in a fresh view whose plot is `plotWidth` pixels wide, `height` tall.
inline Rendered renderModel(TimelineModel& model, int plotWidth, int height, double t0Ns,
                            double t1Ns) {
  TimelineView view;
  view.setModel(&model);
  view.resize(TimelinePlacement::kLabelWidth + plotWidth, height);
  return renderView(view, t0Ns, t1Ns);
}

}  // namespace bubblescope::gui::testing_render
