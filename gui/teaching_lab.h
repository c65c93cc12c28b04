// TeachingLab: the teaching lab panel. Controls for the schedule, p, m, v and
// the cost ratios F : B : W : comm (sliders; the picture and the formula
// follow while dragging), step-through buttons and Play (a QTimer adding one
// op per tick), labels for the formula, the bubble so far and the
// activations each stage holds, and the TeachingView: the selected run's
// measured step above the ideal schedule on one time scale.
//
// Controls are named for tests and scripts: lab_schedule, lab_p, lab_m,
// lab_v, lab_b, lab_w, lab_comm (sliders; the ratios in hundredths of t_F),
// lab_from_run, lab_restart, lab_back, lab_step, lab_play, lab_all,
// lab_same_scale (the measured step on the ideal one's time scale), lab_run
// (run the lab's layout); labels lab_formula, lab_bubble, lab_memory,
// lab_error.
//
// The schedule, p, m and v are the layout's: moving them (or "Reset to the
// run") emits layoutEdited once the lab shows the new schedule, so the
// layout editor can take them (TeachingParams::appliedTo) and "Run this
// layout" runs what the lab shows. The cost ratios are not the layout's (they
// describe the hardware) and change nothing outside the lab: a new schedule,
// p, m or v keeps them (TeachingParams::withLayout).
//
// Following the app (the lab and the editor stay in step): followLayout()
// gives the lab the editor's layout, setMeasuredRun() the shown run. While
// the lab is hidden both wait; when it is shown (or at once when it is) it
// draws that layout: with the run's cost ratios when the run changed since
// the lab last read one, else with the ratios the user set. Neither emits
// layoutEdited (the editor already has the layout).
//
// Contract: GUI thread only; the reader given to setMeasuredRun is not owned
// and is read only inside simulate(): one step of the run, and for an
// oversubscribed run every event once more for its ideal-hardware replay
// (analysis::replayIdealHardware); headless tests call stepForward()
// instead of waiting for the timer.
#pragma once

#include <QWidget>
#include <cstdint>
#include <optional>

#include "common/status.h"
#include "engine/layout/layout.h"
#include "gui/teaching_lab_model.h"
#include "storage/trace_reader.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QSlider;
class QTimer;

namespace bubblescope::gui {

class TeachingView;

class TeachingLab : public QWidget {
  Q_OBJECT

 public:
  explicit TeachingLab(QWidget* parent = nullptr);

  // The run drawn beside the ideal schedule (nullptr: none). Its step is
  // read at the next simulate(), which comes at once when the lab is shown.
  void setMeasuredRun(storage::TraceReader* reader, int64_t runId);
  // The layout editor's layout: the lab shows its schedule, p, m and v (now
  // when shown, else when next shown), keeping its cost ratios unless the
  // measured run changed.
  void followLayout(const layout::Layout& layout);
  // Shows the ideal schedule for the layout's schedule, pp, micro-batches
  // and chunks, with the measured run's cost ratios (TeachingLabModel::
  // paramsFor), and sets the controls to them. An error (p, m, v the
  // schedule does not allow) is shown under the controls and returned.
  Status simulate(const layout::Layout& layout);

  const TeachingLabModel& model() const { return model_; }
  TeachingView* view() const { return view_; }

  void stepForward();
  void stepBack();
  void restart();  // no op shown
  void showAll();
  void setPlaying(bool playing);
  bool playing() const;

 signals:
  void changed();
  // The user moved the schedule, p, m or v and the lab shows them: the
  // layout is now params().appliedTo(the editor's layout).
  void layoutEdited();
  // "Run this": run the lab's layout (after layoutEdited has put it in the
  // editor).
  void runRequested();

 private:
  QSlider* addSlider(const QString& name, int min, int max);
  void onControlsChanged();
  void onScheduleChosen();
  void writeControls(const TeachingParams& params);
  void loadMeasured();
  void refresh();
  // Draws the followed layout (pending_) if there is one.
  void catchUp();

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  TeachingLabModel model_;
  TeachingView* view_ = nullptr;
  QComboBox* schedule_ = nullptr;
  QSlider *p_ = nullptr, *m_ = nullptr, *v_ = nullptr;
  QSlider *b_ = nullptr, *w_ = nullptr, *comm_ = nullptr;
  QPushButton* play_ = nullptr;
  QCheckBox* sameScale_ = nullptr;
  QLabel *formula_ = nullptr, *bubble_ = nullptr, *memory_ = nullptr, *error_ = nullptr;
  QTimer* timer_ = nullptr;
  storage::TraceReader* reader_ = nullptr;
  int64_t runId_ = 0;
  int64_t loadedRunId_ = 0;  // the run model_.measured() holds (0: none)
  layout::Layout lastLayout_;
  std::optional<layout::Layout> pending_;  // followed, not drawn yet
  bool updating_ = false;
};

}  // namespace bubblescope::gui
