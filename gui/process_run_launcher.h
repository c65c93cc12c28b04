// ProcessRunLauncher: RunLauncher over QProcess and bubblescope-cli.
//
// The command is `bubblescope-cli run --layout FILE --trace FILE`; its line
// "run_id: N" (docs/parallel.md) names the new run (runBegun).
#pragma once

#include <QProcess>
#include <QStringList>

#include "common/result.h"
#include "gui/run_launcher.h"

namespace bubblescope::gui {

class ProcessRunLauncher : public RunLauncher {
  Q_OBJECT

 public:
  // program: the bubblescope-cli to start ("" = findCli()).
  explicit ProcessRunLauncher(QString program = {}, QObject* parent = nullptr);
  ~ProcessRunLauncher() override;

  Status start(const RunRequest& request) override;
  void stop() override;
  bool isRunning() const override;
  const QString& program() const { return program_; }

  // The arguments for `request`.
  static Result<QStringList> argumentsFor(const RunRequest& request);
  // bubblescope-cli next to this executable, in the build tree, or on PATH.
  static QString findCli();
  // The run id of a "run_id: N" line of `run`'s output, or 0.
  static qint64 runIdOfLine(const QString& line);

 private:
  void readOutput(QProcess::ProcessChannel channel);

  QString program_;
  QProcess* process_ = nullptr;
  QStringList tail_;  // the last lines of output, for the error of a failed run
  QByteArray partial_[2];
};

}  // namespace bubblescope::gui
