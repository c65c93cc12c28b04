// TimelineReplay: the timeline's switch between a measured run and its
// ideal-hardware replay (docs/prediction.md, "Ideal-hardware replay"): the
// run's own measured per-op thread-CPU costs replayed through the schedule
// simulator, as the report's bubble_replayed is, drawn as a timeline like
// any run. A bar above the timeline: a checkbox (objectName "idealReplay")
// and what is shown.
//
// Contract: the replay is written as a simulated run into a temporary trace
// file of its own (analysis::writeReplayedRun); the open trace file is never
// written. It is built when first switched on for a run, on the GUI thread
// (measureOps reads the run's events once), and kept until another run is
// shown. The switch is offered for a finished measured run with a layout
// and thread CPU times; it says when the run had more ranks than cores (the
// case it is for: its measured spans are stretched). GUI thread only; the
// reader of setMeasuredRun() is not owned.
#pragma once

#include <QString>
#include <QTemporaryDir>
#include <QWidget>
#include <memory>
#include <optional>

#include "common/status.h"
#include "storage/analysis/ideal_replay.h"
#include "storage/trace_reader.h"

class QCheckBox;
class QLabel;

namespace bubblescope::gui {

class TimelinePanel;

class TimelineReplay : public QWidget {
  Q_OBJECT

 public:
  TimelineReplay(TimelinePanel* panel, QWidget* parent = nullptr);
  ~TimelineReplay() override;

  // The panel now shows run `runId` of `reader` (measured): the switch goes
  // back to it and forgets the previous run's replay.
  void setMeasuredRun(storage::TraceReader* reader, int64_t runId);
  // Shows the replay (building it the first time) or the measured run.
  Status setReplayShown(bool on);
  bool replayShown() const { return shown_; }
  // Whether the shown run can be replayed, and why not.
  bool available() const;
  QString whyUnavailable() const { return whyNot_; }
  // The measured run, also while its replay is shown (the panel's model
  // then holds the replayed one).
  const storage::RunRecord& measuredRun() const;
  // The replay of the measured run once built.
  const std::optional<analysis::IdealReplay>& replay() const { return replay_; }
  QString infoText() const;

 signals:
  void switched(bool replayShown);

 private:
  Status build();
  void updateAvailability();
  void showInfo();

  TimelinePanel* panel_ = nullptr;
  QCheckBox* toggle_ = nullptr;
  QLabel* info_ = nullptr;
  storage::TraceReader* reader_ = nullptr;
  int64_t runId_ = 0;
  storage::RunRecord measured_;    // kept while the replay is shown
  double measuredStepNs_ = 0;      // mean over the replayed steps, measured
  int32_t ranks_ = 0, cores_ = 0;  // the most ranks on a host, and its cores
  QString whyNot_;
  bool shown_ = false;
  std::unique_ptr<QTemporaryDir> dir_;
  std::unique_ptr<storage::TraceReader> replayReader_;
  int64_t replayRunId_ = 0;
  std::optional<analysis::IdealReplay> replay_;
};

}  // namespace bubblescope::gui
