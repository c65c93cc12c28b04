// ProcessRunLauncher: RunLauncher over QProcess and bubblescope-cli.
//
// The command is `bubblescope-cli run --layout FILE --trace FILE`. A CLI that
// has no `run` command yet gets `train --model P --steps N --micro-batches M
// --batch-size B --trace FILE`, which trains one process; a layout of more
// than one rank is then refused with a message that says so.
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

  // The arguments for `request`; hasRunCommand says whether the CLI has `run`.
  static Result<QStringList> argumentsFor(const RunRequest& request, bool hasRunCommand);
  // bubblescope-cli next to this executable, in the build tree, or on PATH.
  static QString findCli();
  // Whether `program --help` lists a `run` subcommand.
  static bool cliHasRunCommand(const QString& program);

 private:
  void readOutput(QProcess::ProcessChannel channel);

  QString program_;
  QProcess* process_ = nullptr;
  QStringList tail_;  // the last lines of output, for the error of a failed run
  QByteArray partial_[2];
};

}  // namespace bubblescope::gui
