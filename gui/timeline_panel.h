// TimelinePanel: the legend, the timeline view with its row scroll bar, and
// the detail panel, and for a mixture-of-experts run the expert-load heat map
// (ExpertLoadView) below the details; owns the TimelineModel and keeps it fed.
//
// Feeding: once the event loop runs after showRun(), the model indexes the
// run's events into the overview on a thread of its own
// (TimelineModel::startIndexing; the view paints meanwhile, with the
// indexing's progress); once it has caught up and while the run is running,
// a poll timer re-reads its status and steps and ingests what was appended,
// and the view grows with it. Polling stops once the run is finished, failed
// or interrupted. GUI thread only; the reader is not owned.
#pragma once

#include <QScrollArea>
#include <QScrollBar>
#include <QTimer>
#include <QWidget>

#include "common/status.h"
#include "gui/detail_panel.h"
#include "gui/expert_load_model.h"
#include "gui/expert_load_view.h"
#include "gui/legend_widget.h"
#include "gui/timeline_model.h"
#include "gui/timeline_view.h"

namespace bubblescope::gui {

class TimelinePanel : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kIngestPageEvents = 20000;
  static constexpr int kPollIntervalMs = 500;

  explicit TimelinePanel(QWidget* parent = nullptr, TimelineOptions options = {});

  Status showRun(storage::TraceReader* reader, int64_t runId);
  void clear();
  // Ingests everything committed so far, synchronously (tests, screenshots);
  // stops the background indexing first.
  Status ingestAll();
  // Stops indexing once the overview holds `events` events (ingesting up to
  // there, synchronously): the view as it looks while a big file is still
  // being indexed (screenshots, tests).
  Status ingestOnly(int64_t events);

  TimelineModel* model() { return &model_; }
  TimelineView* view() { return view_; }
  DetailPanel* details() { return details_; }
  // The heat map and its data (shown only when the run has MoE samples).
  ExpertLoadView* expertLoad() { return expertLoad_; }
  const ExpertLoadModel& expertLoadModel() const { return expertLoadModel_; }
  bool expertLoadShown() const { return expertLoadBox_->isVisibleTo(this); }
  // Zooms the view to the step whose samples are at stepEndNs (a heat map click).
  void showStepEndingAt(int64_t stepEndNs);
  void setLegendVisible(bool on) { legend_->setVisible(on); }
  LegendWidget* legend() { return legend_; }

 signals:
  // The shown run's status or step count changed (live runs).
  void runUpdated(const bubblescope::storage::RunRecord& run);
  void errorOccurred(const QString& message);

 private:
  void indexingFinished();
  void poll();
  void syncScrollBar();
  void reloadExpertLoad();

  TimelineModel model_;
  LegendWidget* legend_ = nullptr;
  TimelineView* view_ = nullptr;
  QScrollBar* scroll_ = nullptr;
  DetailPanel* details_ = nullptr;
  ExpertLoadModel expertLoadModel_;
  ExpertLoadView* expertLoad_ = nullptr;
  QScrollArea* expertLoadBox_ = nullptr;
  storage::TraceReader* reader_ = nullptr;  // not owned
  QTimer indexTimer_;                       // single shot: starts the indexing from the event loop
  QTimer pollTimer_;
};

}  // namespace bubblescope::gui
