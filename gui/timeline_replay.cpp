#include "gui/timeline_replay.h"

#include <QApplication>
#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QStringList>
#include <algorithm>

#include "gui/time_format.h"
#include "gui/timeline_panel.h"
#include "storage/analysis/measured_ops.h"
#include "storage/analysis/run_layout.h"
#include "storage/trace_writer.h"

namespace bubblescope::gui {

TimelineReplay::TimelineReplay(TimelinePanel* panel, QWidget* parent)
    : QWidget(parent), panel_(panel) {
  toggle_ = new QCheckBox(tr("Ideal-hardware replay"), this);
  toggle_->setObjectName("idealReplay");
  toggle_->setToolTip(
      tr("Draw the run as it would run with one core per rank: its own measured thread-CPU op "
         "costs replayed through the schedule simulator (the report's bubble_replayed)"));
  info_ = new QLabel(this);
  info_->setObjectName("idealReplayInfo");
  info_->setWordWrap(true);
  auto* row = new QHBoxLayout(this);
  row->setContentsMargins(4, 2, 4, 2);
  row->addWidget(toggle_);
  row->addWidget(info_, 1);
  connect(toggle_, &QCheckBox::toggled, this, [this](bool on) { (void)setReplayShown(on); });
  connect(panel_, &TimelinePanel::runUpdated, this, [this] {
    if (!shown_) updateAvailability();  // a live run that has just finished
  });
  updateAvailability();
}

TimelineReplay::~TimelineReplay() = default;

void TimelineReplay::setMeasuredRun(storage::TraceReader* reader, int64_t runId) {
  reader_ = reader;
  runId_ = reader != nullptr ? runId : 0;
  shown_ = false;
  replay_.reset();
  replayReader_.reset();
  dir_.reset();
  replayRunId_ = 0;
  ranks_ = cores_ = 0;
  if (reader_ != nullptr && runId_ > 0) {
    auto ranks = reader_->ranks(runId_);
    if (ranks.isOk()) {
      for (const storage::RankInfo& r : *ranks) {
        if (r.ranksOnHost > ranks_) {
          ranks_ = r.ranksOnHost;
          cores_ = r.coresOnHost;
        }
      }
    }
  }
  updateAvailability();
}

const storage::RunRecord& TimelineReplay::measuredRun() const {
  return shown_ ? measured_ : panel_->model()->run();
}

bool TimelineReplay::available() const {
  return whyNot_.isEmpty();
}

void TimelineReplay::updateAvailability() {
  const storage::RunRecord& run = measuredRun();
  whyNot_.clear();
  if (reader_ == nullptr || runId_ <= 0) {
    whyNot_ = tr("No run is shown.");
  } else if (run.info.simulated || run.info.imported) {
    whyNot_ = tr("Run %1 is %2: only a measured run is replayed.")
                  .arg(run.id)
                  .arg(QString::fromUtf8(storage::sourceName(run.info)));
  } else if (run.health == storage::RunHealth::kRunning) {
    whyNot_ = tr("Run %1 is still running: its replay is offered once it ends.").arg(run.id);
  } else if (!analysis::runLayout(run.info.layoutJson, run.info.modelJson)) {
    whyNot_ = tr("Run %1 has no readable layout: nothing to replay.").arg(run.id);
  }
  toggle_->setEnabled(available() || shown_);
  showInfo();
}

Status TimelineReplay::build() {
  BS_ASSIGN_OR_RETURN(const analysis::MeasuredOps ops, analysis::measureOps(*reader_, runId_));
  BS_ASSIGN_OR_RETURN(analysis::IdealReplay replay, analysis::replayIdealHardware(ops));
  auto dir = std::make_unique<QTemporaryDir>();
  if (!dir->isValid()) {
    return Status::ioError("cannot make a temporary folder for the replay: " +
                           dir->errorString().toStdString());
  }
  const std::string path = dir->filePath("ideal-replay.db").toStdString();
  const storage::RunRecord& run = panel_->model()->run();
  const std::string name = "ideal-hardware replay of run " + std::to_string(run.id) +
                           (run.info.name.empty() ? "" : " (" + run.info.name + ")");
  int64_t replayRunId = 0;
  {
    BS_ASSIGN_OR_RETURN(auto writer, storage::TraceWriter::open(path));
    BS_ASSIGN_OR_RETURN(replayRunId, analysis::writeReplayedRun(*writer, ops, replay, name));
  }
  BS_ASSIGN_OR_RETURN(auto reader, storage::TraceReader::open(path));
  // The measured steps the replay stands for, to say both step times.
  double sum = 0;
  int n = 0;
  for (const trace_model::StepWindow& w : panel_->model()->steps()) {
    if (w.step < replay.firstStep) continue;
    sum += static_cast<double>(w.endNs - w.startNs);
    ++n;
  }
  measuredStepNs_ = n > 0 ? sum / n : 0.0;
  dir_ = std::move(dir);
  replayReader_ = std::move(reader);
  replayRunId_ = replayRunId;
  replay_ = std::move(replay);
  return Status::ok();
}

Status TimelineReplay::setReplayShown(bool on) {
  Status s = Status::ok();
  if (on && !shown_) {
    if (!available()) {
      s = Status::failedPrecondition(whyNot_.toStdString());
    } else {
      measured_ = panel_->model()->run();
      if (!replay_) {
        QApplication::setOverrideCursor(Qt::WaitCursor);
        s = build();
        QApplication::restoreOverrideCursor();
      }
      if (s.isOk()) s = panel_->showRun(replayReader_.get(), replayRunId_);
      shown_ = s.isOk();
    }
  } else if (!on && shown_) {
    s = panel_->showRun(reader_, runId_);
    shown_ = false;
  }
  {
    const QSignalBlocker block(toggle_);
    toggle_->setChecked(shown_);
  }
  updateAvailability();
  if (!s.isOk()) {
    info_->setText(tr("No replay: %1").arg(QString::fromStdString(s.message()).toHtmlEscaped()));
  }
  emit switched(shown_);
  return s;
}

QString TimelineReplay::infoText() const {
  return info_->text();
}

void TimelineReplay::showInfo() {
  const QString stretched =
      ranks_ > cores_ && cores_ > 0
          ? tr("The run had %1 ranks on %2 cores: its measured spans are stretched.")
                .arg(ranks_)
                .arg(cores_)
          : QString();
  if (shown_ && replay_) {
    QStringList bubbles;
    for (double b : replay_->bubble) bubbles << QString::number(b * 100, 'f', 1);
    info_->setText(tr("<b>Ideal-hardware replay</b> of run %1 (one core per rank, %2 steps): "
                      "step %3, measured %4; bubble per stage %5 %. %6")
                       .arg(measured_.id)
                       .arg(replay_->steps)
                       .arg(formatDuration(replay_->stepNs), formatDuration(measuredStepNs_),
                            bubbles.join(" / "), stretched));
    return;
  }
  if (!available()) {
    info_->setText(whyNot_);
    return;
  }
  info_->setText(tr("Measured run %1. %2").arg(measuredRun().id).arg(stretched));
}

}  // namespace bubblescope::gui
