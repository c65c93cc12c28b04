// A run stopped on request (run got SIGINT, SIGTERM or SIGHUP) is stored
// with status 'stopped' and its reason, in new files and in older files
// migrated to schema v3.
#include <gtest/gtest.h>

#include "storage/schema.h"
#include "storage/trace_reader.h"
#include "storage/trace_writer.h"
#include "tests/storage/schema_v1.h"
#include "tests/storage/temp_dir.h"
#include "tests/storage/trace_fixtures.h"

namespace bubblescope::storage {
namespace {

using testing::TempDir;

// Begins a run, ends it stopped; returns its id.
int64_t writeStoppedRun(const std::string& path) {
  auto writer = TraceWriter::open(path);
  EXPECT_TRUE(writer.isOk()) << writer.status().message();
  if (!writer.isOk()) return -1;
  auto id = (*writer)->beginRun({.name = "stopped", .worldSize = 2});
  EXPECT_TRUE(id.isOk()) << id.status().message();
  const Status ended = (*writer)->endDetachedRun(*id, RunStatus::kStopped, "stopped by SIGINT");
  EXPECT_TRUE(ended.isOk()) << ended.message();
  return *id;
}

void expectStopped(const std::string& path, int64_t id) {
  auto reader = TraceReader::open(path);
  ASSERT_TRUE(reader.isOk()) << reader.status().message();
  EXPECT_EQ((*reader)->schemaVersion(), kSchemaVersion);
  auto run = (*reader)->run(id);
  ASSERT_TRUE(run.isOk()) << run.status().message();
  EXPECT_EQ(run->status, RunStatus::kStopped);
  EXPECT_EQ(run->health, RunHealth::kStopped);
  EXPECT_EQ(run->error, "stopped by SIGINT");
  EXPECT_GT(run->endedUnixNs, 0);
  EXPECT_STREQ(toString(run->health), "stopped");
}

TEST(RunStatusTest, StoppedRunReadsStoppedWithItsReason) {
  TempDir dir;
  const std::string path = dir.file("stopped.db");
  const int64_t id = writeStoppedRun(path);
  expectStopped(path, id);
}

TEST(RunStatusTest, OlderFileMigratesAndTakesAStoppedRun) {
  TempDir dir;
  const std::string path = dir.file("v1.db");
  ASSERT_EQ(testing::writeV1Trace(path, testing::makeEvents(0, 10, 1), true), "");
  const int64_t id = writeStoppedRun(path);
  ASSERT_EQ(id, 2);
  expectStopped(path, id);
  auto reader = TraceReader::open(path);
  ASSERT_TRUE(reader.isOk());
  auto runs = (*reader)->runs();
  ASSERT_TRUE(runs.isOk());
  ASSERT_EQ(runs->size(), 2u) << "the v1 run survives the rebuild of runs";
  EXPECT_EQ(runs->front().eventCount, 10);
}

}  // namespace
}  // namespace bubblescope::storage
