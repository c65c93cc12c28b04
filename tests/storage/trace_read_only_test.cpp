// Traces in folders the reader cannot write (issue 13, item 2): read as an
// unprivileged user (uid 65534), a WAL trace in a read-only folder reads in
// full and nothing in the folder changes. The cases, by what lies next to
// the file (storage/trace_file_access.h has the rule):
// - nothing: no writer is active; the file is read immutable;
// - a -wal with committed runs and its -shm (a writer that died): read
//   through the -shm, read-only: every committed run is there;
// - a -wal without a -shm: refused with one message, since reading around
//   the -wal would silently miss committed runs;
// - a writer that starts after the reader opened: the reader continues
//   through the files the writer made and sees its runs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "storage/trace_reader.h"
#include "storage/trace_writer.h"
#include "tests/storage/temp_dir.h"
#include "tests/storage/trace_fixtures.h"
#include "tests/storage/unprivileged_child.h"

namespace bubblescope::storage {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

constexpr int64_t kEvents = 3000;  // per run: several pages

Status appendRun(TraceWriter& writer) {
  BS_RETURN_IF_ERROR(writer.beginRun({.name = "ro", .worldSize = 4}).status());
  BS_RETURN_IF_ERROR(writer.appendEvents(testing::makeEvents(0, kEvents)));
  return writer.finishRun(RunStatus::kFinished);
}

// Writes `runs` finished runs with a writer that is closed after each.
void writeRuns(const std::string& path, int runs) {
  for (int r = 0; r < runs; ++r) {
    auto writer = TraceWriter::open(path);
    ASSERT_TRUE(writer.isOk()) << writer.status().message();
    ASSERT_TRUE(appendRun(**writer).isOk());
  }
}

// Appends one run in a child process that then dies without closing the
// file: the run stays committed in the -wal, next to its -shm.
void appendRunAndDie(const std::string& path) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto writer = TraceWriter::open(path);
    _exit(writer.isOk() && appendRun(**writer).isOk() ? 0 : 1);  // no close: as if killed
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// Makes the folder and its files readable by everyone and writable by no one.
void makeReadOnly(const TempDir& dir) {
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    fs::permissions(entry.path(),
                    fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  }
  fs::permissions(dir.path(), fs::perms::owner_read | fs::perms::owner_exec |
                                  fs::perms::group_read | fs::perms::group_exec |
                                  fs::perms::others_read | fs::perms::others_exec);
}

// Every file of the folder with its bytes.
std::map<std::string, std::string> snapshot(const TempDir& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    std::ifstream in(entry.path(), std::ios::binary);
    files[entry.path().filename().string()] = {std::istreambuf_iterator<char>(in),
                                               std::istreambuf_iterator<char>()};
  }
  return files;
}

// Reads every run in full: "runs N finished/EVENTS ..." or the first error.
std::string readAll(TraceReader& reader) {
  auto runs = reader.runs();
  if (!runs.isOk()) return runs.status().message();
  std::string out = "runs " + std::to_string(runs->size());
  for (const RunRecord& run : *runs) {
    auto page = reader.eventsAfter(run.id, 0);
    if (!page.isOk()) return page.status().message();
    out += run.status == RunStatus::kFinished ? " finished/" : " not finished/";
    out += std::to_string(page->events.size());
  }
  return out;
}

std::string openAndReadAll(const std::string& path) {
  auto reader = TraceReader::open(path);
  return reader.isOk() ? readAll(**reader) : reader.status().message();
}

// Makes the folder read-only, reads the trace as uid 65534 and checks the
// folder is unchanged afterwards; what the reader saw, or why it could not.
std::string readAsNobody(const TempDir& dir, const std::string& path) {
  makeReadOnly(dir);
  const auto before = snapshot(dir);
  const auto child = testing::runAsNobody([&] { return openAndReadAll(path); });
  EXPECT_TRUE(child.ran) << "could not drop privileges";
  EXPECT_EQ(snapshot(dir), before) << "reading changed the folder";
  return child.message;
}

std::string expectedRuns(int runs) {
  std::string out = "runs " + std::to_string(runs);
  for (int r = 0; r < runs; ++r) out += " finished/" + std::to_string(kEvents);
  return out;
}

TEST(TraceReadOnlyTest, ACleanTraceInAFolderNobodyCanWriteReadsInFull) {
  TempDir dir;
  const std::string path = dir.file("ro.db");
  writeRuns(path, 2);
  ASSERT_FALSE(fs::exists(path + "-wal")) << "a closed trace has no -wal";
  EXPECT_EQ(readAsNobody(dir, path), expectedRuns(2));
}

TEST(TraceReadOnlyTest, AWalWithCommittedRunsIsReadThroughItsShm) {
  TempDir dir;
  const std::string path = dir.file("ro.db");
  writeRuns(path, 1);
  appendRunAndDie(path);
  ASSERT_TRUE(fs::exists(path + "-wal") && fs::exists(path + "-shm"));
  ASSERT_GT(fs::file_size(path + "-wal"), 32u) << "the -wal holds the second run";
  EXPECT_EQ(readAsNobody(dir, path), expectedRuns(2)) << "the run in the -wal is read too";
}

TEST(TraceReadOnlyTest, AWalWithoutItsShmIsRefusedWithOneMessage) {
  TempDir dir;
  const std::string path = dir.file("ro.db");
  writeRuns(path, 1);
  appendRunAndDie(path);
  fs::remove(path + "-shm");
  EXPECT_EQ(readAsNobody(dir, path),
            "cannot read " + path + " here: " + path +
                "-wal may hold runs not yet in the file, and reading them needs " + path +
                "-shm, which this user cannot create in " + dir.path().string() +
                " (not writable); open it once as a user who can write " + dir.path().string() +
                ", or copy " + path + " and " + path + "-wal to a folder you can write");
  // Its owner, who can write the folder, reads both runs.
  fs::permissions(dir.path(), fs::perms::owner_all, fs::perm_options::add);
  EXPECT_EQ(openAndReadAll(path), expectedRuns(2));
}

TEST(TraceReadOnlyTest, AReaderFollowsAWriterThatStartsAfterIt) {
  TempDir dir;
  const std::string path = dir.file("shared.db");
  writeRuns(path, 1);
  // Another user's folder: its owner may write, the reader may not.
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                            fs::perms::others_read);
  fs::permissions(dir.path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                  fs::perms::others_read | fs::perms::others_exec);
  int toParent[2], toChild[2];
  ASSERT_EQ(pipe(toParent), 0);
  ASSERT_EQ(pipe(toChild), 0);
  auto child = testing::startAsNobody([&] {
    auto reader = TraceReader::open(path);
    if (!reader.isOk()) return reader.status().message();
    const std::string first = readAll(**reader);
    char c = 'r';
    if (write(toParent[1], &c, 1) != 1 || read(toChild[0], &c, 1) != 1) return std::string("pipe");
    return first + "; then " + readAll(**reader);
  });
  close(toParent[1]);  // the child's ends: a child that ends early unblocks the read
  close(toChild[0]);
  ASSERT_GT(child.pid, 0);
  char c = 0;
  if (read(toParent[0], &c, 1) != 1) {
    FAIL() << "the reader did not open: " << testing::finish(child).message;
  }
  // The owner appends a run and keeps the file open while the reader reads.
  auto writer = TraceWriter::open(path);
  ASSERT_TRUE(writer.isOk()) << writer.status().message();
  ASSERT_TRUE(appendRun(**writer).isOk());
  ASSERT_EQ(write(toChild[1], &c, 1), 1);
  const auto result = testing::finish(child);
  close(toParent[0]);
  close(toChild[1]);
  ASSERT_TRUE(result.ran) << "could not drop privileges";
  EXPECT_EQ(result.message, expectedRuns(1) + "; then " + expectedRuns(2));
}

}  // namespace
}  // namespace bubblescope::storage
