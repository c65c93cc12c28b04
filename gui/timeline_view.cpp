#include "gui/timeline_view.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

#include "gui/span_palette.h"
#include "gui/time_format.h"

namespace bubblescope::gui {

TimelineView::TimelineView(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setFocusPolicy(Qt::StrongFocus);
  setMinimumSize(400, 120);
  setAttribute(Qt::WA_OpaquePaintEvent);
}

void TimelineView::setModel(TimelineModel* model) {
  if (model_ != nullptr) disconnect(model_, nullptr, this, nullptr);
  model_ = model;
  if (model_ != nullptr) {
    connect(model_, &TimelineModel::rowsChanged, this, &TimelineView::onRowsChanged);
    connect(model_, &TimelineModel::contentChanged, this, &TimelineView::onContentChanged);
  }
  onRowsChanged();
  following_ = true;
  fitAll();
}

void TimelineView::onRowsChanged() {
  geometry_ = model_ != nullptr ? RowGeometry::of(model_->rows()) : RowGeometry{};
  paintCache_.clear();  // the labels it holds may be of the old rows
  setScrollY(scrollY_);
  emit scrollRangeChanged();
  update();
}

void TimelineView::onContentChanged() {
  if (following_) {
    fitAll();
  } else {
    update();
  }
}

TimelinePlacement TimelineView::placement() const {
  TimelinePlacement at;
  at.plot = QRect(TimelinePlacement::kLabelWidth, TimelinePlacement::kRulerHeight,
                  std::max(1, width() - TimelinePlacement::kLabelWidth),
                  std::max(1, height() - TimelinePlacement::kRulerHeight));
  at.scrollY = scrollY_;
  at.t0Ns = t0_;
  at.t1Ns = t1_;
  at.originNs = model_ != nullptr ? model_->startNs() : 0;
  return at;
}

int TimelineView::visibleRowsHeight() const {
  return std::max(1, height() - TimelinePlacement::kRulerHeight);
}

std::pair<int, int> TimelineView::visibleRows() const {
  const int rows = static_cast<int>(geometry_.top.size());
  int first = 0;
  while (first < rows && geometry_.top[first] + RowGeometry::kLaneHeight <= scrollY_) ++first;
  int last = std::min(first, rows - 1);
  const int bottom = scrollY_ + visibleRowsHeight();
  while (last + 1 < rows && geometry_.top[last + 1] < bottom) ++last;
  return {first, last};
}

void TimelineView::setViewRange(double t0Ns, double t1Ns) {
  if (!(t1Ns > t0Ns)) return;
  t1Ns = std::max(t1Ns, t0Ns + 10.0);  // deepest zoom: 10 ns across the view
  t0_ = t0Ns;
  t1_ = t1Ns;
  emit viewChanged();
  update();
}

void TimelineView::fitAll() {
  if (model_ == nullptr || model_->endNs() <= model_->startNs()) {
    setViewRange(0, 1e6);
    return;
  }
  const double span = static_cast<double>(model_->endNs() - model_->startNs());
  setViewRange(model_->startNs() - span * 0.01, model_->endNs() + span * 0.01);
}

void TimelineView::userNavigated() {
  following_ = false;
}

void TimelineView::zoomBy(double factor, double anchorX) {
  const TimelinePlacement at = placement();
  const double anchor =
      at.tOf(std::clamp(anchorX, double(at.plot.left()), double(at.plot.right())));
  setViewRange(anchor - (anchor - t0_) * factor, anchor + (t1_ - anchor) * factor);
}

void TimelineView::panByPixels(double dx) {
  const double ns = dx * (t1_ - t0_) / placement().plot.width();
  setViewRange(t0_ + ns, t1_ + ns);
}

bool TimelineView::jumpToStep(int direction) {
  if (model_ == nullptr || model_->steps().empty()) return false;
  const auto& steps = model_->steps();
  const double centre = (t0_ + t1_) / 2;
  const trace_model::StepWindow* target = nullptr;
  if (direction > 0) {
    for (const trace_model::StepWindow& s : steps) {
      if (s.startNs > centre) {
        target = &s;
        break;
      }
    }
  } else {
    for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
      if (it->endNs < centre) {
        target = &*it;
        break;
      }
    }
  }
  if (target == nullptr) return false;
  userNavigated();
  const double pad = (target->endNs - target->startNs) * 0.03 + 1;
  setViewRange(target->startNs - pad, target->endNs + pad);
  return true;
}

void TimelineView::setScrollY(int y) {
  const int maxY = std::max(0, geometry_.contentHeight - visibleRowsHeight() + 8);
  const int clamped = std::clamp(y, 0, maxY);
  if (clamped == scrollY_) return;
  scrollY_ = clamped;
  emit scrollRangeChanged();
  update();
}

void TimelineView::setSelection(std::optional<std::pair<double, double>> s) {
  selection_ = s;
  if (s) {
    emit selectionChanged(std::min(s->first, s->second), std::max(s->first, s->second));
  } else {
    emit selectionCleared();
  }
  update();
}

void TimelineView::setSelectedSpan(std::optional<trace_model::Event> e) {
  selected_ = std::move(e);
  linked_.clear();
  if (selected_ && model_ != nullptr) {
    auto linked = model_->linkedTo(*selected_);
    if (linked.isOk()) linked_ = std::move(*linked);  // a failed read only loses the arrow
  }
  update();
}

void TimelineView::setHighlightedKernel(std::optional<HighlightedKernel> kernel) {
  kernel_ = std::move(kernel);
  kernelInstances_.clear();
  if (kernel_ && model_ != nullptr) {
    auto instances = model_->kernelInstances(kernel_->rank, kernel_->name);
    if (instances.isOk()) kernelInstances_ = std::move(*instances);
  }
  update();
}

void TimelineView::markRanks(const std::vector<int32_t>& ranks) {
  markedRanks_ = ranks;
  if (model_ != nullptr && !ranks.empty()) {
    int first = -1;
    for (int32_t rank : ranks) {
      const int row = model_->rowOf(rank, trace_model::Lane::kCompute);
      if (row >= 0 && (first < 0 || row < first)) first = row;
    }
    if (first >= 0 && first < static_cast<int>(geometry_.top.size())) {
      const auto [top, bottom] = visibleRows();
      if (first < top || first > bottom)
        setScrollY(geometry_.top[first] - RowGeometry::kLaneHeight);
    }
  }
  update();
}

void TimelineView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  const TimelinePlacement at = placement();
  if (model_ == nullptr || model_->rows().empty()) {
    p.fillRect(rect(), palette().base());
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(rect(), Qt::AlignCenter,
               tr("Open a trace file (File ▸ Open, or drop it here) and pick a run."));
    return;
  }
  const auto [first, last] = visibleRows();
  const TimelineFrame& frame = model_->frame(t0_, t1_, at.plot.width(), first, last);
  TimelineOverlay overlay;
  overlay.selectionNs = selection_;
  overlay.highlighted = highlighted_;
  overlay.selected = selected_;
  overlay.linked = linked_;
  overlay.markedRanks = markedRanks_;
  overlay.kernelInstances = &kernelInstances_;
  overlay.steps = &model_->steps();
  overlay.cache = &paintCache_;
  paintTimeline(p, frame, model_->rows(), geometry_, at, overlay);
}

void TimelineView::wheelEvent(QWheelEvent* event) {
  const QPoint delta = event->angleDelta();
  if (event->modifiers() & Qt::ShiftModifier) {
    setScrollY(scrollY_ - (delta.y() != 0 ? delta.y() : delta.x()) / 2);
  } else if (std::abs(delta.x()) > std::abs(delta.y())) {
    userNavigated();
    panByPixels(-delta.x() / 2.0);
  } else if (delta.y() != 0) {
    userNavigated();
    zoomBy(std::pow(0.9985, delta.y()), event->position().x());
  }
  event->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return;
  pressPos_ = lastPos_ = event->position();
  moved_ = false;
  if (event->modifiers() & Qt::ShiftModifier) {
    drag_ = Drag::kSelect;
    const double t = placement().tOf(event->position().x());
    selection_ = std::make_pair(t, t);
  } else {
    drag_ = Drag::kPan;
    setCursor(Qt::ClosedHandCursor);
  }
}

void TimelineView::mouseMoveEvent(QMouseEvent* event) {
  const QPointF pos = event->position();
  if (drag_ != Drag::kNone) {
    if ((pos - pressPos_).manhattanLength() > 3) moved_ = true;
    if (drag_ == Drag::kPan && moved_) {
      userNavigated();
      panByPixels(lastPos_.x() - pos.x());
      setScrollY(scrollY_ + static_cast<int>(lastPos_.y() - pos.y()));
    } else if (drag_ == Drag::kSelect) {
      selection_->second = placement().tOf(pos.x());
      update();
    }
    lastPos_ = pos;
    return;
  }
  const auto e = eventUnder(pos);
  if (e != highlighted_) {
    highlighted_ = e;
    update();
  }
  if (e) {
    QString text = QStringLiteral("<b>%1</b> · %2<br>rank %3 · %4")
                       .arg(QString::fromStdString(e->name).toHtmlEscaped(), eventLabel(*e))
                       .arg(e->rank)
                       .arg(formatDuration(double(e->endNs - e->startNs)));
    if (e->step >= 0) text += QStringLiteral("<br>step %1").arg(e->step);
    if (e->microBatch >= 0) text += QStringLiteral(" · micro-batch %1").arg(e->microBatch);
    if (e->peer >= 0) text += QStringLiteral(" · peer %1").arg(e->peer);
    QToolTip::showText(event->globalPosition().toPoint(), text, this);
  } else if (const QString label = labelTipAt(pos); !label.isEmpty()) {
    QToolTip::showText(event->globalPosition().toPoint(), label, this);
  } else {
    QToolTip::hideText();
  }
}

void TimelineView::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return;
  const Drag drag = drag_;
  drag_ = Drag::kNone;
  unsetCursor();
  if (drag == Drag::kSelect) {
    if (moved_) {
      setSelection(selection_);
    } else {
      setSelection(std::nullopt);
    }
    return;
  }
  if (!moved_) {
    const auto e = eventUnder(event->position());
    setSelectedSpan(e);
    if (e) {
      emit eventSelected(*e);
    } else {
      emit spanCleared();
    }
  }
}

void TimelineView::keyPressEvent(QKeyEvent* event) {
  const double centreX = placement().plot.center().x();
  switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
      userNavigated();
      zoomBy(0.7, centreX);
      break;
    case Qt::Key_Minus:
      userNavigated();
      zoomBy(1 / 0.7, centreX);
      break;
    case Qt::Key_Left:
      userNavigated();
      panByPixels(-placement().plot.width() * 0.15);
      break;
    case Qt::Key_Right:
      userNavigated();
      panByPixels(placement().plot.width() * 0.15);
      break;
    case Qt::Key_Up:
      setScrollY(scrollY_ - RowGeometry::kLaneHeight * 2);
      break;
    case Qt::Key_Down:
      setScrollY(scrollY_ + RowGeometry::kLaneHeight * 2);
      break;
    case Qt::Key_Home:
      following_ = true;
      fitAll();
      break;
    case Qt::Key_PageDown:
    case Qt::Key_BracketRight:
      jumpToStep(+1);
      break;
    case Qt::Key_PageUp:
    case Qt::Key_BracketLeft:
      jumpToStep(-1);
      break;
    case Qt::Key_Escape:
      setSelection(std::nullopt);
      setSelectedSpan(std::nullopt);
      emit spanCleared();
      break;
    default:
      QWidget::keyPressEvent(event);
      return;
  }
  event->accept();
}

void TimelineView::resizeEvent(QResizeEvent*) {
  setScrollY(scrollY_);
  emit scrollRangeChanged();
}

void TimelineView::leaveEvent(QEvent*) {
  if (highlighted_) {
    highlighted_.reset();
    update();
  }
}

QString TimelineView::labelTipAt(QPointF pos) const {
  if (model_ == nullptr) return {};
  const TimelinePlacement at = placement();
  if (pos.x() >= at.plot.left() || pos.y() < at.plot.top()) return {};
  const int row = geometry_.rowAt(static_cast<int>(pos.y()) - at.plot.top() + scrollY_);
  if (row < 0 || row >= static_cast<int>(model_->rows().size())) return {};
  const TimelineRow& r = model_->rows()[row];
  return QStringLiteral("%1 · %2").arg(r.rankLabel, r.laneLabel);
}

std::optional<trace_model::Event> TimelineView::eventUnder(QPointF pos) const {
  if (model_ == nullptr) return std::nullopt;
  const TimelinePlacement at = placement();
  if (!at.plot.contains(pos.toPoint())) return std::nullopt;
  const int row = geometry_.rowAt(static_cast<int>(pos.y()) - at.plot.top() + scrollY_);
  if (row < 0) return std::nullopt;
  const double nsPerPx = (t1_ - t0_) / at.plot.width();
  return model_->eventAt(row, at.tOf(pos.x()), 3 * nsPerPx);
}

}  // namespace bubblescope::gui
