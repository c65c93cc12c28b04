// ExpertLoadView: the expert-load heat map beside the timeline, one grid per
// MoE block (experts down, steps across). A cell's colour is the expert's
// load relative to the step's mean (ExpertLoadModel): blue below its fair
// share, near-white at 1, red up to the model's scaleMax(); a dark corner
// marks a cell whose expert dropped assignments over its capacity. A colour
// bar below says the scale. Hovering a cell shows its numbers; clicking it
// emits stepClicked with the step's time (the timeline zooms to that step).
//
// Contract: paints what the model (not owned; it must outlive the view or be
// replaced with setModel) holds; call modelChanged() after the model changes.
// GUI thread only.
#pragma once

#include <QColor>
#include <QRect>
#include <QWidget>
#include <cstdint>
#include <optional>

#include "gui/expert_load_model.h"

namespace bubblescope::gui {

class ExpertLoadView : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kMargin = 8;
  static constexpr int kLabelWidth = 30;   // "e12" left of the rows
  static constexpr int kTitleHeight = 18;  // the block's title above its grid
  static constexpr int kAxisHeight = 14;   // step numbers below it
  static constexpr int kBlockGap = 10;
  static constexpr int kBarHeight = 10;  // the colour bar

  explicit ExpertLoadView(QWidget* parent = nullptr);

  void setModel(const ExpertLoadModel* model);
  void modelChanged();

  struct Hit {
    size_t block = 0;
    int32_t expert = 0;
    int32_t step = 0;
  };
  // The cell under a point of the widget (nullopt: none).
  std::optional<Hit> cellAt(QPoint p) const;
  // Where a cell is drawn (empty when out of range).
  QRect cellRect(size_t block, int32_t expert, int32_t step) const;
  // The colour of a relative load on a scale whose top is scaleMax.
  static QColor loadColour(double relativeLoad, double scaleMax);

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override { return {160, 80}; }

 signals:
  void stepClicked(int64_t stepEndNs);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  bool event(QEvent* event) override;  // tool tips

 private:
  int cellWidth(size_t block) const;
  int cellHeight(size_t block) const;
  int blockTop(size_t block) const;  // the grid's top (below its title)
  int contentHeight() const;

  const ExpertLoadModel* model_ = nullptr;
};

}  // namespace bubblescope::gui
