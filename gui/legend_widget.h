// LegendWidget: the colour of each event kind of the run (every kind before
// the run's kinds are known), and the bubble hatch, in a flowing row of
// swatches; for an interleaved run, one more swatch per model
// chunk (its forward and backward shades); for a run with GPU streams, one
// swatch per kernel category the timeline has shown (GPU records are painted
// by category at every zoom: the kinds "GPU kernel" and "memcpy" give way to
// them).
// Colours come from span_palette.h only.
#pragma once

#include <QWidget>
#include <cstdint>

class QPainter;

namespace bubblescope::gui {

class LegendWidget : public QWidget {
  Q_OBJECT

 public:
  explicit LegendWidget(QWidget* parent = nullptr);
  QSize sizeHint() const override;
  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override;
  // Model chunks of the shown run (TimelineModel::chunkCount()); the chunk
  // swatches show when there are two or more.
  void setChunkCount(int chunks);
  int chunkCount() const { return chunks_; }
  // Bit c: kernel category c is shown (TimelineModel::kernelCategories()).
  void setKernelCategories(uint32_t categories);
  uint32_t kernelCategories() const { return categories_; }
  // Bit k: the run has events of EventKind k (TimelineModel::kinds()); only
  // those kinds are listed. 0 (no run, nothing indexed yet): every kind.
  void setKinds(uint32_t kinds);
  uint32_t kinds() const { return kinds_; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  // Lays the entries out for `width`; paints when painter is given.
  int layoutEntries(int width, QPainter* painter) const;

  int chunks_ = 0;
  uint32_t categories_ = 0;
  uint32_t kinds_ = 0;
};

}  // namespace bubblescope::gui
