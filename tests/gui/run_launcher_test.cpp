#include <gtest/gtest.h>

#include <QFile>
#include <QFileInfo>
#include <QSignalSpy>

#include "gui/process_run_launcher.h"
#include "gui/run_progress.h"
#include "storage/trace_reader.h"
#include "tests/gui/hang_deadline.h"
#include "tests/storage/temp_dir.h"

namespace bubblescope::gui {
namespace {

TEST(ProcessRunLauncher, BuildsTheRunCommand) {
  RunRequest r;
  r.layoutPath = "l.json";
  r.tracePath = "t.db";
  auto run = ProcessRunLauncher::argumentsFor(r);
  ASSERT_TRUE(run.isOk());
  EXPECT_EQ(*run, (QStringList{"run", "--layout", "l.json", "--trace", "t.db"}));
  r.layoutPath.clear();
  EXPECT_FALSE(ProcessRunLauncher::argumentsFor(r).isOk());
  r.layoutPath = "l.json";
  r.tracePath.clear();
  EXPECT_FALSE(ProcessRunLauncher::argumentsFor(r).isOk());
}

TEST(ProcessRunLauncher, ReadsTheRunIdLine) {
  EXPECT_EQ(ProcessRunLauncher::runIdOfLine("run_id: 42"), 42);
  EXPECT_EQ(ProcessRunLauncher::runIdOfLine("run: 2 ranks with mpirun, tracing to t.db run 4"), 0);
  EXPECT_EQ(ProcessRunLauncher::runIdOfLine("step 1 run_id: 3"), 0);
  EXPECT_EQ(ProcessRunLauncher::runIdOfLine("run_id: x"), 0);
}

// A stand-in CLI: names run 7, prints two lines, fails with code 3.
QString writeFakeCli(const bubblescope::testing::TempDir& dir) {
  const QString path = QString::fromStdString(dir.file("fake-cli"));
  QFile f(path);
  EXPECT_TRUE(f.open(QIODevice::WriteOnly));
  f.write(
      "#!/bin/sh\n"
      "echo 'run_id: 7'\n"
      "echo \"step 1 loss 5.5 args $*\"\n"
      "echo 'error: rank 2 failed: out of memory' >&2\n"
      "exit 3\n");
  f.close();
  QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
  return path;
}

TEST(ProcessRunLauncher, ReportsOutputAndTheErrorOfAFailedRun) {
  bubblescope::testing::TempDir dir;
  ProcessRunLauncher launcher(writeFakeCli(dir));
  QSignalSpy lines(&launcher, &RunLauncher::outputLine);
  QSignalSpy finished(&launcher, &RunLauncher::finished);
  QSignalSpy begun(&launcher, &RunLauncher::runBegun);
  RunRequest r;
  r.layoutPath = "l.json";
  r.tracePath = "t.db";
  ASSERT_TRUE(launcher.start(r).isOk());
  EXPECT_FALSE(launcher.start(r).isOk()) << "one run at a time";
  ASSERT_TRUE(finished.wait(testing::kHangMs));
  ASSERT_EQ(begun.size(), 1);
  EXPECT_EQ(begun.at(0).at(0).toLongLong(), 7);
  EXPECT_EQ(finished.at(0).at(0).toInt(), 3);
  EXPECT_TRUE(finished.at(0).at(1).toString().contains("rank 2 failed"));
  ASSERT_GE(lines.size(), 2);
  QStringList all;
  for (const auto& l : lines) all << l.at(0).toString();
  EXPECT_TRUE(all.join("\n").contains("args run --layout l.json --trace t.db"));
  EXPECT_FALSE(launcher.isRunning());
}

TEST(ProcessRunLauncher, TrainsTinyWithTheRealCli) {
  const QString cli = QStringLiteral(BUBBLESCOPE_CLI_PATH);
  if (!QFileInfo(cli).isExecutable()) GTEST_SKIP() << "bubblescope-cli is not built";
  bubblescope::testing::TempDir dir;
  const QString trace = QString::fromStdString(dir.file("tiny.db"));
  ProcessRunLauncher launcher(cli);
  QSignalSpy finished(&launcher, &RunLauncher::finished);
  QSignalSpy lines(&launcher, &RunLauncher::outputLine);
  QSignalSpy begun(&launcher, &RunLauncher::runBegun);
  RunRequest r;
  r.tracePath = trace;
  const QString layout = QString::fromStdString(dir.file("l.json"));
  QFile f(layout);
  ASSERT_TRUE(f.open(QIODevice::WriteOnly));
  f.write(R"({"model": {"preset": "tiny"}, "steps": 2})");
  f.close();
  r.layoutPath = layout;
  ASSERT_TRUE(launcher.start(r).isOk());
  ASSERT_TRUE(finished.wait(120000));
  ASSERT_EQ(finished.at(0).at(0).toInt(), 0) << finished.at(0).at(1).toString().toStdString();
  ASSERT_EQ(begun.size(), 1) << "run prints run_id: N once";
  EXPECT_EQ(begun.at(0).at(0).toLongLong(), 1);
  auto reader = storage::TraceReader::open(trace.toStdString());
  ASSERT_TRUE(reader.isOk()) << reader.status().message();
  auto runs = (*reader)->runs();
  ASSERT_TRUE(runs.isOk());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ(runs->front().health, storage::RunHealth::kFinished);
  EXPECT_GT(runs->front().eventCount, 0);
  // The progress strip reads the run's own output: its last step line.
  std::optional<RunProgress> last;
  for (const QList<QVariant>& line : lines) {
    if (auto p = parseProgressLine(line.at(0).toString())) last = p;
  }
  ASSERT_TRUE(last.has_value()) << "no progress line in the run's output";
  EXPECT_EQ(last->step, 2);
  EXPECT_EQ(last->steps, 2);
  EXPECT_TRUE(last->loss.has_value());
}

}  // namespace
}  // namespace bubblescope::gui
