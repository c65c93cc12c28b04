#include "gui/render_trace.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QStandardPaths>

#include "storage/simulated_run.h"
#include "storage/trace_reader.h"
#include "storage/trace_writer.h"

namespace bubblescope::gui {

namespace {

constexpr int32_t kStages = 8;
constexpr int32_t kMicroBatches = 16;

layout::Layout renderLayout(int32_t ranks, int32_t steps) {
  layout::Layout l;
  l.model = *layout::modelPreset("gpt2-124m");
  l.pp = ranks % kStages == 0 ? kStages : 1;
  l.dp = ranks / l.pp;
  l.microBatches = kMicroBatches;
  l.schedule = layout::ScheduleKind::kOneFOneB;
  l.steps = steps;
  return l;
}

// `bubblescope-cli simulate`'s default costs (F:B:W:comm:grad_sync:optimizer
// 1:1:1:0.05:1.5:0.3 in ms).
storage::SimulatedRunOptions renderCosts() {
  storage::SimulatedRunOptions o;
  o.costs.forward = 1.0;
  o.costs.backwardInput = 1.0;
  o.costs.backwardWeight = 1.0;
  o.costs.comm = 0.05;
  o.costs.gradSync = 1.5;
  o.costs.optimizer = 0.3;
  return o;
}

// Events and world size of the file's last run when it is finished.
std::pair<int64_t, int32_t> lastFinishedRun(const std::string& path) {
  if (!QFile::exists(QString::fromStdString(path))) return {0, 0};
  auto reader = storage::TraceReader::open(path);
  if (!reader.isOk()) return {0, 0};
  auto runs = (*reader)->runs();
  if (!runs.isOk() || runs->empty() || runs->back().status != storage::RunStatus::kFinished) {
    return {0, 0};
  }
  return {runs->back().eventCount, runs->back().info.worldSize};
}

Result<int64_t> writeRun(const std::string& path, const layout::Layout& l) {
  QFile::remove(QString::fromStdString(path));
  BS_ASSIGN_OR_RETURN(auto writer, storage::TraceWriter::open(path));
  BS_RETURN_IF_ERROR(storage::writeSimulatedRun(*writer, l, renderCosts()).status());
  return lastFinishedRun(path).first;
}

}  // namespace

Result<QString> ensureRenderTrace(int64_t events, int32_t ranks, std::ostream& log) {
  if (events < 1 || ranks < 1) {
    return Status::invalidArgument("--events and --ranks must be at least 1");
  }
  QString dir = qEnvironmentVariable("TMPDIR");
  if (dir.isEmpty()) dir = QDir::tempPath();
  const QString path =
      QDir(dir).filePath(QStringLiteral("bubblescope-render-%1-%2.db").arg(events).arg(ranks));
  const auto [have, world] = lastFinishedRun(path.toStdString());
  if (have >= events && world == ranks) {
    log << "trace: " << path.toStdString() << " (reused)\n";
    return path;
  }
  // One step tells the events a step writes; then enough steps for `events`.
  QElapsedTimer timer;
  timer.start();
  const std::string one = (path + ".step").toStdString();
  BS_ASSIGN_OR_RETURN(const int64_t perStep, writeRun(one, renderLayout(ranks, 1)));
  QFile::remove(QString::fromStdString(one));
  if (perStep < 1) return Status::internal("a simulated step wrote no events");
  const auto steps = static_cast<int32_t>((events + perStep - 1) / perStep);
  log << "trace: writing " << steps << " steps of " << perStep << " events on " << ranks
      << " ranks into " << path.toStdString() << "\n";
  BS_ASSIGN_OR_RETURN(const int64_t written,
                      writeRun(path.toStdString(), renderLayout(ranks, steps)));
  log << "trace_write_s: " << timer.nsecsElapsed() / 1e9 << " (" << written << " events)\n";
  return path;
}

}  // namespace bubblescope::gui
