// TimelineView: the interactive timeline of one run (QPainter, no charts lib).
//
// Mouse: wheel zooms around the cursor (shift+wheel scrolls the rows), drag
// pans, shift-drag measures an interval, a click selects the span under the
// cursor; hovering shows a tooltip. Keys: + / - zoom, left / right pan,
// up / down scroll, Home fits the run, PgUp / PgDn (or [ / ]) jump to the
// previous / next step, Escape clears the selection.
//
// Contract: draws only what TimelineModel::frame() returns; owns no data.
// The model is not owned and must outlive the view (or be replaced).
#pragma once

#include <QWidget>
#include <optional>
#include <string>
#include <vector>

#include "gui/timeline_model.h"
#include "gui/timeline_painter.h"

namespace bubblescope::gui {

class TimelineView : public QWidget {
  Q_OBJECT

 public:
  explicit TimelineView(QWidget* parent = nullptr);

  void setModel(TimelineModel* model);
  TimelineModel* model() const { return model_; }

  // The visible time range, in ns on the run's timeline.
  double viewStartNs() const { return t0_; }
  double viewEndNs() const { return t1_; }
  void setViewRange(double t0Ns, double t1Ns);
  void fitAll();
  void zoomBy(double factor, double anchorX);
  void panByPixels(double dx);
  bool jumpToStep(int direction);  // +1 next, -1 previous; false when none
  // While following, the view keeps fitting the growing run.
  void setFollowing(bool on) { following_ = on; }
  bool following() const { return following_; }

  int scrollY() const { return scrollY_; }
  void setScrollY(int y);
  int contentHeight() const { return geometry_.contentHeight; }
  int visibleRowsHeight() const;
  // The first and last row (inclusive) the view shows at its scroll position.
  std::pair<int, int> visibleRows() const;

  std::optional<std::pair<double, double>> selection() const { return selection_; }
  // The clicked span, outlined until another click, Escape or a new run;
  // a launch call and the GPU records it launched are joined by an arrow.
  const std::optional<trace_model::Event>& selectedSpan() const { return selected_; }
  void setSelectedSpan(std::optional<trace_model::Event> e);
  // Tints the labels of `ranks` and scrolls the first of them into view
  // (what a chart click selects); empty clears.
  void markRanks(const std::vector<int32_t>& ranks);
  const std::vector<int32_t>& markedRanks() const { return markedRanks_; }
  void setSelection(std::optional<std::pair<double, double>> s);
  // The kernel picked in the Kernels table: every GPU record named `name`
  // on `rank` (TimelineModel::kernelInstances, read once here) is marked at
  // every zoom (TimelineOverlay::kernelInstances) until cleared (nullopt)
  // or a new run. A failed read marks none.
  struct HighlightedKernel {
    int32_t rank = 0;
    std::string name;
  };
  void setHighlightedKernel(std::optional<HighlightedKernel> kernel);
  const std::optional<HighlightedKernel>& highlightedKernel() const { return kernel_; }
  // The instances marked (empty when none is picked).
  const std::vector<trace_model::Event>& kernelInstances() const { return kernelInstances_; }

  // Placement of the current widget size and view (for tests and benches).
  TimelinePlacement placement() const;
  const RowGeometry& rowGeometry() const { return geometry_; }

 signals:
  void eventSelected(const bubblescope::trace_model::Event& event);
  // Escape, or a click on no span: no span is selected any more.
  void spanCleared();
  void selectionChanged(double t0Ns, double t1Ns);
  // The measured interval is gone (Escape, a click without a drag).
  void selectionCleared();
  void viewChanged();
  void scrollRangeChanged();

 protected:
  void paintEvent(QPaintEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void leaveEvent(QEvent* event) override;

 private:
  void onRowsChanged();
  void onContentChanged();
  std::optional<trace_model::Event> eventUnder(QPointF pos) const;
  // The whole rank and lane name of the row whose label is under pos (the
  // label column may elide them), or empty.
  QString labelTipAt(QPointF pos) const;
  void userNavigated();

  TimelineModel* model_ = nullptr;
  RowGeometry geometry_;
  double t0_ = 0, t1_ = 1;
  int scrollY_ = 0;
  bool following_ = true;
  enum class Drag { kNone, kPan, kSelect } drag_ = Drag::kNone;
  QPointF pressPos_;
  QPointF lastPos_;
  bool moved_ = false;
  std::optional<std::pair<double, double>> selection_;
  std::optional<trace_model::Event> highlighted_;
  std::optional<trace_model::Event> selected_;
  std::vector<trace_model::Event> linked_;  // selected_'s launch or GPU records
  std::vector<int32_t> markedRanks_;
  std::optional<HighlightedKernel> kernel_;
  std::vector<trace_model::Event> kernelInstances_;  // kernel_'s GPU records
  TimelinePaintCache paintCache_;  // pixels kept between frames (paintTimeline)
};

}  // namespace bubblescope::gui
