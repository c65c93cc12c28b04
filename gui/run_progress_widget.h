// RunProgressWidget: the status-bar strip of a run the window started: a
// progress bar over its steps, "step 3/40 · loss 5.24 · 12 345 tok/s" from
// its output lines (run_progress.h) and a Stop button.
//
// Contract: hidden until started(); addOutputLine() takes every output line
// (non-progress lines are ignored); ended() shows the outcome and hides the
// bar and the button. GUI thread only.
#pragma once

#include <QWidget>
#include <optional>

#include "gui/run_progress.h"

class QLabel;
class QProgressBar;
class QPushButton;

namespace bubblescope::gui {

class RunProgressWidget : public QWidget {
  Q_OBJECT

 public:
  explicit RunProgressWidget(QWidget* parent = nullptr);

  void started(int steps);
  void addOutputLine(const QString& line);
  void ended(bool ok, const QString& message);
  // The run ended because Stop was pressed (it reads stopped in the file).
  void stopped();

  const std::optional<RunProgress>& last() const { return last_; }
  QString text() const;
  QProgressBar* bar() const { return bar_; }

 signals:
  void stopRequested();

 private:
  void endWith(const QString& head, const QString& message);
  QProgressBar* bar_ = nullptr;
  QLabel* label_ = nullptr;
  QPushButton* stop_ = nullptr;
  std::optional<RunProgress> last_;
};

}  // namespace bubblescope::gui
