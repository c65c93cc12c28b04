#include "gui/teaching_view.h"

#include <QPainter>

#include "gui/teaching_painter.h"

namespace bubblescope::gui {

TeachingView::TeachingView(const TeachingLabModel* model, QWidget* parent)
    : QWidget(parent), model_(model) {
  setObjectName("teachingView");
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  modelChanged();
}

void TeachingView::modelChanged() {
  setMinimumHeight(teachingGeometry(*model_, width(), font()).height);
  updateGeometry();
  update();
}

QSize TeachingView::sizeHint() const {
  return {1200, teachingGeometry(*model_, 1200, font()).height};
}

void TeachingView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  paintTeachingLab(p, *model_, width(), palette());
}

}  // namespace bubblescope::gui
