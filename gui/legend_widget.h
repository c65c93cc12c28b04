// LegendWidget: the colour of each event kind of the run (every kind before
// the run's kinds are known), and the bubble hatch, in a flowing row of
// swatches; for an interleaved run, one more swatch per model
// chunk (its forward and backward shades); for a run with GPU streams, one
// swatch per kernel category the timeline has shown (GPU records are painted
// by category at every zoom: the kinds "GPU kernel" and "memcpy" give way to
// them, and so do the kinds only GPU streams hold, setKindsOffGpu()). The
// bubble hatch is listed only for a run that marks steps (setHasSteps): the
// timeline hatches idle time inside steps only, so a run without steps (an
// import of a trace with no step ranges) never shows it.
// An imported trace's host ops and API calls (kind "other", off the GPU
// streams) are listed as "other (host ops, API calls)".
// Each colour is listed once: a kind and a kernel category of the same colour
// (a CPU-side all-reduce and an NCCL all-reduce kernel) share one swatch
// named for both ("all-reduce (CPU and GPU)").
// Colours come from span_palette.h only.
#pragma once

#include <QColor>
#include <QString>
#include <QWidget>
#include <cstdint>
#include <vector>

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
  // Bit k: the run has events of EventKind k off the GPU streams
  // (TimelineModel::kindsOffGpu()). Once kernel categories are shown, only
  // those kinds are listed (the others are painted by category). Every bit
  // until it is set.
  void setKindsOffGpu(uint32_t kinds);
  // Whether the run marks steps (TimelineModel::steps() not empty); true
  // until set (no run yet: every entry).
  void setHasSteps(bool hasSteps);
  bool hasSteps() const { return hasSteps_; }

  // What the legend lists, in order: each entry's label and its one colour
  // (invalid for the chunk swatches, the bubble hatch and the arrow).
  struct Entry {
    QString label;
    QColor colour;
  };
  std::vector<Entry> entries() const;

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  // Lays the entries out for `width`; paints when painter is given.
  int layoutEntries(int width, QPainter* painter) const;

  int chunks_ = 0;
  uint32_t categories_ = 0;
  uint32_t kinds_ = 0;
  uint32_t kindsOffGpu_ = ~uint32_t{0};
  bool hasSteps_ = true;
};

}  // namespace bubblescope::gui
