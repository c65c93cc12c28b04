#include "gui/process_run_launcher.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QRegularExpression>
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

qint64 ProcessRunLauncher::runIdOfLine(const QString& line) {
  static const QRegularExpression runId(QStringLiteral("^run_id: (\\d+)$"));
  const QRegularExpressionMatch m = runId.match(line);
  return m.hasMatch() ? m.captured(1).toLongLong() : 0;
}

Result<QStringList> ProcessRunLauncher::argumentsFor(const RunRequest& r) {
  if (r.tracePath.isEmpty()) return Status::invalidArgument("no trace file to write the run to");
  if (r.layoutPath.isEmpty()) return Status::invalidArgument("no layout file to run");
  return QStringList{"run", "--layout", r.layoutPath, "--trace", r.tracePath};
}

Status ProcessRunLauncher::start(const RunRequest& request) {
  if (isRunning()) return Status::failedPrecondition("a run is already going; stop it first");
  auto args = argumentsFor(request);
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
    if (const qint64 id = runIdOfLine(line); id > 0) emit runBegun(id);
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
