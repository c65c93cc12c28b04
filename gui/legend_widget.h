// LegendWidget: the colour of each event kind, and the bubble hatch, in a
// flowing row of swatches. Colours come from span_palette.h only.
#pragma once

#include <QWidget>

class QPainter;

namespace bubblescope::gui {

class LegendWidget : public QWidget {
  Q_OBJECT

 public:
  explicit LegendWidget(QWidget* parent = nullptr);
  QSize sizeHint() const override;
  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override;

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  // Lays the entries out for `width`; paints when painter is given.
  int layoutEntries(int width, QPainter* painter) const;
};

}  // namespace bubblescope::gui
