// Writer and reader in two processes: live following, and a writer killed
// with SIGKILL mid-run.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>

#include "storage/trace_reader.h"
#include "storage/trace_writer.h"
#include "tests/storage/temp_dir.h"
#include "tests/storage/trace_fixtures.h"

namespace bubblescope::storage {
namespace {

using testing::makeEvents;
using testing::TempDir;

constexpr int64_t kBatch = 500;

bool writeInt(int fd, int64_t v) {
  return write(fd, &v, sizeof v) == sizeof v;
}
bool readInt(int fd, int64_t* v) {
  return read(fd, v, sizeof *v) == sizeof *v;
}

struct Child {
  pid_t pid = -1;
  int fromChild = -1;  // the child reports committed event counts here
  int toChild = -1;    // the parent acknowledges here
};

// Forks a writer process running `body(toParent, fromParent)`; it never
// returns into the test runner.
template <class Body>
Child forkWriter(Body body) {
  int up[2], down[2];
  if (pipe(up) != 0 || pipe(down) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    close(up[0]);
    close(down[1]);
    _exit(body(up[1], down[0]));
  }
  close(up[1]);
  close(down[0]);
  return {pid, up[0], down[1]};
}

TEST(TraceProcessesTest, ReaderSeesEventsWhileAnotherProcessWrites) {
  TempDir dir;
  const std::string path = dir.file("live.db");
  constexpr int kBatches = 5;
  Child child = forkWriter([&](int up, int down) {
    auto writer = TraceWriter::open(path, {.batchEvents = 1 << 20, .maxBatchMs = 1 << 20});
    if (!writer.isOk() || !(*writer)->beginRun({}).isOk()) return 2;
    for (int b = 0; b < kBatches; ++b) {
      if (!(*writer)->appendEvents(makeEvents(b * kBatch, kBatch)).isOk()) return 3;
      if (!(*writer)->flush().isOk()) return 4;
      int64_t ack = 0;
      if (!writeInt(up, (b + 1) * kBatch) || !readInt(down, &ack)) return 5;
    }
    if (!(*writer)->finishRun(RunStatus::kFinished).isOk()) return 6;
    return 0;
  });
  ASSERT_GT(child.pid, 0);

  std::unique_ptr<TraceReader> reader;
  std::vector<trace_model::Event> seen;
  int64_t cursor = 0;
  for (int b = 0; b < kBatches; ++b) {
    int64_t committed = 0;
    ASSERT_TRUE(readInt(child.fromChild, &committed));
    if (!reader) {
      auto opened = TraceReader::open(path);
      ASSERT_TRUE(opened.isOk()) << opened.status().message();
      reader = std::move(opened).value();
    }
    // The writer is paused mid-run: the reader sees exactly what it committed.
    auto page = reader->eventsAfter(1, cursor);
    ASSERT_TRUE(page.isOk()) << page.status().message();
    cursor = page->cursor;
    seen.insert(seen.end(), page->events.begin(), page->events.end());
    ASSERT_EQ(static_cast<int64_t>(seen.size()), committed);
    auto run = reader->run(1);
    ASSERT_TRUE(run.isOk());
    EXPECT_EQ(run->health, RunHealth::kRunning);
    ASSERT_TRUE(writeInt(child.toChild, 1));
  }
  int status = 0;
  waitpid(child.pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(testing::sortedEvents(seen), testing::sortedEvents(makeEvents(0, kBatches * kBatch)));
  auto run = reader->run(1);
  ASSERT_TRUE(run.isOk());
  EXPECT_EQ(run->health, RunHealth::kFinished);
  close(child.fromChild);
  close(child.toChild);
}

TEST(TraceProcessesTest, WriterKilledMidRunKeepsEveryCommittedBatch) {
  TempDir dir;
  const std::string path = dir.file("killed.db");
  Child child = forkWriter([&](int up, int) {
    auto writer = TraceWriter::open(path, {.batchEvents = kBatch, .maxBatchMs = 1 << 20});
    if (!writer.isOk() || !(*writer)->beginRun({}).isOk()) return 2;
    for (int64_t b = 0;; ++b) {
      // Each append of kBatch events fills and commits exactly one batch.
      if (!(*writer)->appendEvents(makeEvents(b * kBatch, kBatch)).isOk()) return 3;
      if (!writeInt(up, (b + 1) * kBatch)) return 5;
      // Half of the next batch, left uncommitted when the kill arrives.
      if (!(*writer)->appendEvents(makeEvents((b + 1) * kBatch, kBatch / 2)).isOk()) return 3;
      if (!(*writer)->appendEvents(makeEvents((b + 1) * kBatch + kBatch / 2, kBatch / 2)).isOk()) {
        return 3;
      }
      ++b;
      if (!writeInt(up, (b + 1) * kBatch)) return 5;
    }
  });
  ASSERT_GT(child.pid, 0);
  int64_t committed = 0;
  while (committed < 20 * kBatch) ASSERT_TRUE(readInt(child.fromChild, &committed));
  ASSERT_EQ(kill(child.pid, SIGKILL), 0);
  int status = 0;
  waitpid(child.pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  close(child.fromChild);
  close(child.toChild);

  auto reader = TraceReader::open(path);
  ASSERT_TRUE(reader.isOk()) << reader.status().message();
  auto run = (*reader)->run(1);
  ASSERT_TRUE(run.isOk()) << run.status().message();
  EXPECT_EQ(run->status, RunStatus::kRunning);
  EXPECT_EQ(run->health, RunHealth::kInterrupted);
  auto page = (*reader)->eventsAfter(1, 0, 1 << 30);
  ASSERT_TRUE(page.isOk()) << page.status().message();
  const auto n = static_cast<int64_t>(page->events.size());
  EXPECT_GE(n, committed);
  EXPECT_EQ(n % kBatch, 0) << "only whole batches are committed";
  EXPECT_EQ(testing::sortedEvents(page->events), testing::sortedEvents(makeEvents(0, n)));
  EXPECT_EQ(run->eventCount, n);
}

}  // namespace
}  // namespace bubblescope::storage
