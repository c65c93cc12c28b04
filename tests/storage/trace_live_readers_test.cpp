// Readers of one process (the app's timeline and its analysis worker) while
// another process appends runs: no reader ever sees an error or loses a run.
// The writer is a separate program (trace_append_runs), so the two sides share
// nothing but the file, as the app and `bubblescope-cli run` do.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <string>

#include "storage/trace_reader.h"
#include "storage/trace_writer.h"
#include "tests/storage/temp_dir.h"
#include "tests/storage/trace_fixtures.h"

extern char** environ;

namespace bubblescope::storage {
namespace {

using testing::TempDir;

constexpr int kAppendedRuns = 50;
constexpr int64_t kEventsPerRun = 2000;
constexpr size_t kStepsPerRun = 3;  // trace_append_runs writes steps 0..2 of rank 0

// A child process; killed and reaped if the test ends before it does.
struct Spawned {
  pid_t pid = -1;
  ~Spawned() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  // Reaps the child if it has ended; its wait status in *status.
  bool ended(int* status) {
    if (pid <= 0 || waitpid(pid, status, WNOHANG) != pid) return false;
    pid = -1;
    return true;
  }
};

Spawned spawnAppender(const std::string& path, int runs) {
  const std::string program = BS_TRACE_APPEND_RUNS;
  const std::string runsArg = std::to_string(runs);
  const std::string eventsArg = std::to_string(kEventsPerRun);
  char* argv[] = {const_cast<char*>(program.c_str()), const_cast<char*>(path.c_str()),
                  const_cast<char*>(runsArg.c_str()), const_cast<char*>(eventsArg.c_str()),
                  nullptr};
  Spawned child;
  if (posix_spawn(&child.pid, program.c_str(), nullptr, nullptr, argv, environ) != 0) {
    child.pid = -1;
  }
  return child;
}

// Reads every run the way the app does (runs, then the steps and events of
// each finished run) and checks nothing seen before is gone. "" when fine.
std::string checkReader(TraceReader& reader, size_t* runsSeen) {
  auto runs = reader.runs();
  if (!runs.isOk()) return "runs: " + runs.status().message();
  if (runs->size() < *runsSeen) {
    return "lost runs: " + std::to_string(runs->size()) + " after " + std::to_string(*runsSeen);
  }
  *runsSeen = runs->size();
  for (const RunRecord& run : *runs) {
    if (run.status != RunStatus::kFinished) continue;
    const std::string which = "run " + std::to_string(run.id) + ": ";
    if (run.eventCount != kEventsPerRun) {
      return which + std::to_string(run.eventCount) + " events";
    }
    auto steps = reader.steps(run.id);
    if (!steps.isOk()) return which + steps.status().message();
    if (steps->size() != kStepsPerRun) return which + std::to_string(steps->size()) + " steps";
  }
  if (runs->empty() || runs->back().status != RunStatus::kFinished) return "";
  auto page = reader.eventsAfter(runs->back().id, 0);
  if (!page.isOk()) return "events: " + page.status().message();
  if (static_cast<int64_t>(page->events.size()) != kEventsPerRun) {
    return "run " + std::to_string(runs->back().id) + " reads " +
           std::to_string(page->events.size()) + " events";
  }
  return "";
}

TEST(TraceLiveReadersTest, TwoReadersOfOneProcessSurviveAnotherProcessAppendingRuns) {
  TempDir dir;
  const std::string path = dir.file("live.db");
  {
    auto writer = TraceWriter::open(path);
    ASSERT_TRUE(writer.isOk()) << writer.status().message();
    ASSERT_TRUE((*writer)->beginRun({}).isOk());
    ASSERT_TRUE((*writer)->appendEvents(testing::makeEvents(0, kEventsPerRun)).isOk());
    std::vector<trace_model::StepRecord> steps;
    for (int32_t s = 0; s < 3; ++s) steps.push_back({0, s, 1.0, 64, s * 1000, s * 1000 + 900});
    ASSERT_TRUE((*writer)->appendSteps(steps).isOk());
    ASSERT_TRUE((*writer)->finishRun(RunStatus::kFinished).isOk());
  }
  // The timeline's reader stays open for the whole test.
  auto timeline = TraceReader::open(path);
  ASSERT_TRUE(timeline.isOk()) << timeline.status().message();
  size_t timelineSeen = 0;
  ASSERT_EQ(checkReader(**timeline, &timelineSeen), "");

  Spawned appender = spawnAppender(path, kAppendedRuns);
  ASSERT_GT(appender.pid, 0) << "cannot start " << BS_TRACE_APPEND_RUNS;
  int status = 0;
  int rounds = 0;
  bool ended = false;
  while (!ended) {
    ended = appender.ended(&status);  // a last round after the end
    // The analysis worker opens a reader of its own for every analysis.
    size_t workerSeen = 0;
    auto worker = TraceReader::open(path);
    ASSERT_TRUE(worker.isOk()) << "round " << rounds << ": " << worker.status().message();
    ASSERT_EQ(checkReader(**worker, &workerSeen), "") << "worker, round " << rounds;
    ASSERT_GE(workerSeen, timelineSeen) << "round " << rounds;
    ASSERT_EQ(checkReader(**timeline, &timelineSeen), "") << "timeline, round " << rounds;
    ++rounds;
  }
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the appender failed: " << status;
  EXPECT_EQ(timelineSeen, size_t{1 + kAppendedRuns}) << "after " << rounds << " rounds";
  auto last = TraceReader::open(path);
  ASSERT_TRUE(last.isOk()) << last.status().message();
  size_t lastSeen = 0;
  EXPECT_EQ(checkReader(**last, &lastSeen), "");
  EXPECT_EQ(lastSeen, size_t{1 + kAppendedRuns});
}

}  // namespace
}  // namespace bubblescope::storage
