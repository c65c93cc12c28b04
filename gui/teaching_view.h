// TeachingView: paints a TeachingLabModel (teaching_painter.h) at the
// widget's width; its height is what the rows need.
#pragma once

#include <QWidget>

#include "gui/teaching_lab_model.h"

namespace bubblescope::gui {

class TeachingView : public QWidget {
  Q_OBJECT

 public:
  // model: not owned; must outlive the view.
  explicit TeachingView(const TeachingLabModel* model, QWidget* parent = nullptr);

  // Call after the model changed: resizes to the rows and repaints.
  void modelChanged();
  QSize sizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  const TeachingLabModel* model_;
};

}  // namespace bubblescope::gui
