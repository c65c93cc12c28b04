// RunLauncher: starts a training run as a separate process (the GUI never
// links the engine runtime) and reports its output and end.
//
// Contract: one run at a time; start() fails with FailedPrecondition while a
// run is going. outputLine is emitted per line of stdout and stderr;
// runBegun once the run exists in the trace file, with its id (`run` prints
// "run_id: N" then); finished once per started run, with the exit code and,
// when it failed, the last lines of its output as the error. GUI thread only.
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>

#include "common/status.h"

namespace bubblescope::gui {

struct RunRequest {
  QString layoutPath;  // a layout JSON file (docs/layout-format.md)
  QString tracePath;   // the trace file the run appends to
};

class RunLauncher : public QObject {
  Q_OBJECT

 public:
  using QObject::QObject;
  ~RunLauncher() override = default;

  virtual Status start(const RunRequest& request) = 0;
  // Asks the run to stop (SIGTERM, then SIGKILL after a grace period).
  virtual void stop() = 0;
  virtual bool isRunning() const = 0;

 signals:
  void outputLine(const QString& line);
  void runBegun(qint64 runId);
  void finished(int exitCode, const QString& error);
};

}  // namespace bubblescope::gui
