#include "gui/timeline_panel.h"

#include <QHBoxLayout>
#include <QSplitter>
#include <QVBoxLayout>

namespace bubblescope::gui {

TimelinePanel::TimelinePanel(QWidget* parent, TimelineOptions options)
    : QWidget(parent), model_(options) {
  legend_ = new LegendWidget(this);
  view_ = new TimelineView(this);
  view_->setModel(&model_);
  scroll_ = new QScrollBar(Qt::Vertical, this);
  details_ = new DetailPanel(this);
  expertLoad_ = new ExpertLoadView(this);
  expertLoad_->setModel(&expertLoadModel_);
  expertLoadBox_ = new QScrollArea(this);
  expertLoadBox_->setWidget(expertLoad_);
  expertLoadBox_->setWidgetResizable(true);
  expertLoadBox_->setVisible(false);

  auto* timelineBox = new QWidget(this);
  auto* row = new QHBoxLayout(timelineBox);
  row->setContentsMargins(0, 0, 0, 0);
  row->setSpacing(0);
  row->addWidget(view_, 1);
  row->addWidget(scroll_);

  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(timelineBox);
  auto* side = new QSplitter(Qt::Vertical, this);
  side->addWidget(details_);
  side->addWidget(expertLoadBox_);
  side->setStretchFactor(0, 0);
  side->setStretchFactor(1, 1);
  split->addWidget(side);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 0);
  split->setSizes({900, 280});

  auto* column = new QVBoxLayout(this);
  column->setContentsMargins(0, 0, 0, 0);
  column->setSpacing(2);
  column->addWidget(legend_);
  column->addWidget(split, 1);

  connect(view_, &TimelineView::scrollRangeChanged, this, &TimelinePanel::syncScrollBar);
  connect(scroll_, &QScrollBar::valueChanged, view_, &TimelineView::setScrollY);
  connect(view_, &TimelineView::eventSelected, this,
          [this](const trace_model::Event& e) { details_->showSpan(e, model_.startNs()); });
  connect(view_, &TimelineView::spanCleared, details_, &DetailPanel::clearSpan);
  connect(view_, &TimelineView::selectionCleared, details_, &DetailPanel::clearSelection);
  connect(view_, &TimelineView::selectionChanged, this,
          [this](double t0, double t1) { details_->showSelection(t0, t1, model_.startNs()); });

  connect(expertLoad_, &ExpertLoadView::stepClicked, this, &TimelinePanel::showStepEndingAt);

  // Started from the event loop, not in showRun(): a caller that indexes
  // synchronously right after (ingestOnly) sees exactly what it asked for.
  indexTimer_.setSingleShot(true);
  indexTimer_.setInterval(0);
  connect(&indexTimer_, &QTimer::timeout, &model_, &TimelineModel::startIndexing);
  connect(&model_, &TimelineModel::indexProgressed, this, [this] {
    legend_->setChunkCount(model_.chunkCount());
    legend_->setKinds(model_.kinds());
    legend_->setKindsOffGpu(model_.kindsOffGpu());
    legend_->setHasSteps(!model_.steps().empty());
  });
  connect(&model_, &TimelineModel::indexingFinished, this, &TimelinePanel::indexingFinished);
  connect(&model_, &TimelineModel::kernelCategoriesChanged, this,
          [this] { legend_->setKernelCategories(model_.kernelCategories()); });
  pollTimer_.setInterval(kPollIntervalMs);
  connect(&pollTimer_, &QTimer::timeout, this, &TimelinePanel::poll);
}

Status TimelinePanel::showRun(storage::TraceReader* reader, int64_t runId) {
  indexTimer_.stop();
  pollTimer_.stop();
  details_->clearDetails();
  view_->setSelection(std::nullopt);
  view_->setSelectedSpan(std::nullopt);
  view_->setHighlightedKernel(std::nullopt);
  view_->markRanks({});
  const Status s = model_.setRun(reader, runId);
  reader_ = s.isOk() ? reader : nullptr;
  reloadExpertLoad();
  legend_->setChunkCount(0);
  legend_->setKernelCategories(0);
  legend_->setKinds(0);
  legend_->setKindsOffGpu(~uint32_t{0});
  legend_->setHasSteps(!s.isOk() || !model_.steps().empty());
  view_->setFollowing(true);
  view_->fitAll();
  if (!s.isOk()) return s;
  indexTimer_.start();
  return Status::ok();
}

void TimelinePanel::clear() {
  indexTimer_.stop();
  pollTimer_.stop();
  model_.clear();
  details_->clearDetails();
  reader_ = nullptr;
  reloadExpertLoad();
}

Status TimelinePanel::ingestAll() {
  indexTimer_.stop();
  model_.stopIndexing();
  while (model_.hasRun()) {
    auto n = model_.ingest(kIngestPageEvents * 10);
    if (!n.isOk()) return n.status();
    if (model_.caughtUp()) break;
  }
  legend_->setChunkCount(model_.chunkCount());
  legend_->setKinds(model_.kinds());
  legend_->setKindsOffGpu(model_.kindsOffGpu());
  legend_->setHasSteps(!model_.steps().empty());
  return Status::ok();
}

Status TimelinePanel::ingestOnly(int64_t events) {
  indexTimer_.stop();
  model_.stopIndexing();
  pollTimer_.stop();
  int64_t ingested = 0;
  while (model_.hasRun() && ingested < events) {
    auto n = model_.ingest(std::min<int64_t>(kIngestPageEvents, events - ingested));
    if (!n.isOk()) return n.status();
    ingested += *n;
    if (*n == 0) break;
  }
  legend_->setChunkCount(model_.chunkCount());
  legend_->setKinds(model_.kinds());
  legend_->setKindsOffGpu(model_.kindsOffGpu());
  legend_->setHasSteps(!model_.steps().empty());
  return Status::ok();
}

void TimelinePanel::indexingFinished() {
  if (!model_.indexError().isOk()) {
    emit errorOccurred(QString::fromStdString(model_.indexError().message()));
    return;
  }
  if (model_.caughtUp() && model_.run().health == storage::RunHealth::kRunning) {
    pollTimer_.start();
  }
}

void TimelinePanel::poll() {
  const Status s = model_.refresh();
  if (!s.isOk()) {
    pollTimer_.stop();
    emit errorOccurred(QString::fromStdString(s.message()));
    return;
  }
  do {
    auto n = model_.ingest(kIngestPageEvents);
    if (!n.isOk()) {
      pollTimer_.stop();
      emit errorOccurred(QString::fromStdString(n.status().message()));
      return;
    }
  } while (!model_.caughtUp());
  legend_->setChunkCount(model_.chunkCount());
  legend_->setKinds(model_.kinds());
  legend_->setKindsOffGpu(model_.kindsOffGpu());
  legend_->setHasSteps(!model_.steps().empty());
  reloadExpertLoad();  // a live run adds a step's samples
  emit runUpdated(model_.run());
  if (model_.run().health != storage::RunHealth::kRunning) pollTimer_.stop();
}

void TimelinePanel::reloadExpertLoad() {
  Status s = Status::ok();
  if (reader_ != nullptr && model_.hasRun()) {
    s = expertLoadModel_.load(*reader_, model_.run().id);
  } else {
    expertLoadModel_.clear();
  }
  if (!s.isOk()) emit errorOccurred(QString::fromStdString(s.message()));
  expertLoad_->modelChanged();
  expertLoadBox_->setVisible(!expertLoadModel_.empty());
}

void TimelinePanel::showStepEndingAt(int64_t stepEndNs) {
  // The samples of a step are written at its end: the last step starting before.
  const trace_model::StepWindow* found = nullptr;
  for (const trace_model::StepWindow& w : model_.steps()) {
    if (w.startNs < stepEndNs) found = &w;
  }
  if (found == nullptr) return;
  view_->setFollowing(false);
  view_->setViewRange(found->startNs, found->endNs);
}

void TimelinePanel::syncScrollBar() {
  const int page = view_->visibleRowsHeight();
  scroll_->setPageStep(page);
  scroll_->setSingleStep(RowGeometry::kLaneHeight);
  scroll_->setRange(0, std::max(0, view_->contentHeight() - page + 8));
  scroll_->setVisible(view_->contentHeight() > page);
  const QSignalBlocker block(scroll_);
  scroll_->setValue(view_->scrollY());
}

}  // namespace bubblescope::gui
