#include "gui/process_run_launcher.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QStandardPaths>
#include <QTimer>

namespace bubblescope::gui {

namespace {
constexpr int kTailLines = 8;
constexpr int kStopGraceMs = 10000;  // `run` itself stops the job within 3 s
}  // namespace

ProcessRunLauncher::ProcessRunLauncher(QString program, QObject* parent)
    : RunLauncher(parent), program_(program.isEmpty() ? findCli() : std::move(program)) {}

ProcessRunLauncher::~ProcessRunLauncher() {
  if (process_ != nullptr && process_->state() != QProcess::NotRunning) {
    process_->kill();
    process_->waitForFinished(2000);
  }
}

QString ProcessRunLauncher::findCli() {
  const QString dir = QCoreApplication::applicationDirPath();
  for (const QString& candidate : {dir + "/bubblescope-cli", dir + "/../cli/bubblescope-cli",
                                   dir + "/../../cli/bubblescope-cli"}) {
    if (QFileInfo(candidate).isExecutable()) return QFileInfo(candidate).canonicalFilePath();
  }
  const QString onPath = QStandardPaths::findExecutable("bubblescope-cli");
  return onPath.isEmpty() ? QStringLiteral("bubblescope-cli") : onPath;
}

bool ProcessRunLauncher::cliHasRunCommand(const QString& program) {
  QProcess help;
  help.start(program, {"--help"});
  if (!help.waitForFinished(5000)) return false;
  for (const QByteArray& line : help.readAllStandardOutput().split('\n')) {
    if (line.trimmed().startsWith("run ") || line.trimmed() == "run") return true;
  }
  return false;
}

Result<QStringList> ProcessRunLauncher::argumentsFor(const RunRequest& r, bool hasRunCommand) {
  if (r.tracePath.isEmpty()) return Status::invalidArgument("no trace file to write the run to");
  if (hasRunCommand) {
    if (r.layoutPath.isEmpty()) return Status::invalidArgument("no layout file to run");
    return QStringList{"run", "--layout", r.layoutPath, "--trace", r.tracePath};
  }
  if (r.worldSize != 1) {
    return Status::unsupported(
        "this bubblescope-cli has no `run` command yet, so only single-process layouts (dp = tp "
        "= pp = 1) can be started; this layout has " +
        std::to_string(r.worldSize) + " ranks");
  }
  return QStringList{"train",
                     "--model",
                     r.modelPreset,
                     "--steps",
                     QString::number(r.steps),
                     "--micro-batches",
                     QString::number(r.microBatches),
                     "--batch-size",
                     QString::number(r.microBatchSize),
                     "--trace",
                     r.tracePath};
}

Status ProcessRunLauncher::start(const RunRequest& request) {
  if (isRunning()) return Status::failedPrecondition("a run is already going; stop it first");
  auto args = argumentsFor(request, cliHasRunCommand(program_));
  if (!args.isOk()) return args.status();
  delete process_;
  process_ = new QProcess(this);
  tail_.clear();
  partial_[0].clear();
  partial_[1].clear();
  connect(process_, &QProcess::readyReadStandardOutput, this,
          [this] { readOutput(QProcess::StandardOutput); });
  connect(process_, &QProcess::readyReadStandardError, this,
          [this] { readOutput(QProcess::StandardError); });
  connect(process_, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
    readOutput(QProcess::StandardOutput);
    readOutput(QProcess::StandardError);
    const bool ok = status == QProcess::NormalExit && code == 0;
    QString error;
    if (!ok) {
      error = status == QProcess::CrashExit ? tr("the run was killed or crashed") : QString();
      if (!tail_.isEmpty()) error += (error.isEmpty() ? "" : ": ") + tail_.join("\n");
      if (error.isEmpty()) error = tr("the run exited with code %1").arg(code);
    }
    emit finished(status == QProcess::NormalExit ? code : -1, error);
  });
  connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
    if (e == QProcess::FailedToStart) {
      emit finished(-1, tr("cannot start %1: %2").arg(program_, process_->errorString()));
    }
  });
  process_->start(program_, *args);
  return Status::ok();
}

void ProcessRunLauncher::stop() {
  if (!isRunning()) return;
  process_->terminate();
  QProcess* p = process_;
  QTimer::singleShot(kStopGraceMs, p, [p] {
    if (p->state() != QProcess::NotRunning) p->kill();
  });
}

bool ProcessRunLauncher::isRunning() const {
  return process_ != nullptr && process_->state() != QProcess::NotRunning;
}

void ProcessRunLauncher::readOutput(QProcess::ProcessChannel channel) {
  if (process_ == nullptr) return;
  process_->setReadChannel(channel);
  QByteArray& buffer = partial_[channel == QProcess::StandardOutput ? 0 : 1];
  buffer += process_->readAll();
  int newline;
  while ((newline = buffer.indexOf('\n')) >= 0) {
    const QString line = QString::fromUtf8(buffer.left(newline)).trimmed();
    buffer.remove(0, newline + 1);
    if (line.isEmpty()) continue;
    tail_ << line;
    while (tail_.size() > kTailLines) tail_.removeFirst();
    emit outputLine(line);
  }
  if (process_->state() == QProcess::NotRunning && !buffer.isEmpty()) {
    const QString line = QString::fromUtf8(buffer).trimmed();
    buffer.clear();
    if (!line.isEmpty()) {
      tail_ << line;
      emit outputLine(line);
    }
  }
}

}  // namespace bubblescope::gui
