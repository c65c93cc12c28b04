// Launch correlation in the store (schema v2), and v1 files, which have no
// correlation column: they open, read as unlinked, and migrate when a writer
// appends to them.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "storage/schema.h"
#include "storage/trace_reader.h"
#include "storage/trace_writer.h"
#include "tests/storage/schema_v1.h"
#include "tests/storage/temp_dir.h"
#include "tests/storage/trace_fixtures.h"

namespace bubblescope::storage {
namespace {

using testing::TempDir;
using trace_model::Event;
using trace_model::EventKind;
using trace_model::Lane;

Event launchEvent(int32_t rank, int64_t correlation, int64_t startNs) {
  Event e;
  e.rank = rank;
  e.lane = Lane::kCudaApi;
  e.kind = EventKind::kOther;
  e.name = "cudaLaunchKernel";
  e.startNs = startNs;
  e.endNs = startNs + 4000;
  e.correlationId = correlation;
  return e;
}

Event kernelEvent(int32_t rank, int64_t correlation, int64_t startNs) {
  Event e;
  e.rank = rank;
  e.lane = trace_model::gpuStreamLane(7);
  e.kind = EventKind::kKernel;
  e.name = "residual_forward_kernel";
  e.startNs = startNs;
  e.endNs = startNs + 20000;
  e.correlationId = correlation;
  return e;
}

// Events of two ranks with steps, as a v1 writer would have stored them.
std::vector<Event> oldEvents() {
  std::vector<Event> events;
  for (int i = 0; i < 6; ++i) {
    Event e;
    e.rank = i % 2;
    e.kind = i % 3 ? EventKind::kForward : EventKind::kAllReduce;
    e.lane = i % 3 ? Lane::kCompute : Lane::kCommunication;
    e.name = i % 3 ? "forward" : "dp.bucket0";
    e.startNs = 1000 * i;
    e.endNs = 1000 * i + 700;
    e.step = i / 4;
    e.bytes = i % 3 ? 0 : 4096;
    events.push_back(e);
  }
  return events;
}

std::string metaVersion(const std::string& path) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &stmt, nullptr);
  std::string v;
  if (sqlite3_step(stmt) == SQLITE_ROW) {
    v = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return v;
}

TEST(TraceCorrelationTest, ALaunchAndItsKernelRoundTripLinked) {
  TempDir dir;
  const std::string path = dir.file("t.db");
  // Rank 0 and rank 1 both use correlation 42 (ids are per process): links
  // never cross ranks. Rank 0 also has a kernel whose launch was not traced.
  const std::vector<Event> events = {launchEvent(0, 42, 1000),  kernelEvent(0, 42, 9000),
                                     launchEvent(1, 42, 2000),  kernelEvent(1, 42, 8000),
                                     kernelEvent(0, 43, 40000), launchEvent(0, 44, 50000)};
  int64_t runId = 0;
  {
    auto writer = TraceWriter::open(path);
    ASSERT_TRUE(writer.isOk()) << writer.status().message();
    auto id = (*writer)->beginRun({.name = "gpu", .worldSize = 2});
    ASSERT_TRUE(id.isOk());
    runId = *id;
    ASSERT_TRUE((*writer)->appendEvents(events).isOk());
    ASSERT_TRUE((*writer)->finishRun(RunStatus::kFinished).isOk());
  }
  auto reader = TraceReader::open(path);
  ASSERT_TRUE(reader.isOk()) << reader.status().message();
  EXPECT_EQ((*reader)->schemaVersion(), kSchemaVersion);
  auto page = (*reader)->eventsAfter(runId, 0);
  ASSERT_TRUE(page.isOk());
  EXPECT_EQ(testing::sortedEvents(page->events), testing::sortedEvents(events));  // correlation ids

  auto linked = (*reader)->linkedEvents(runId, 0, 42);
  ASSERT_TRUE(linked.isOk()) << linked.status().message();
  ASSERT_EQ(linked->size(), 2u);
  EXPECT_EQ((*linked)[0], events[0]);  // the launch first: start order
  EXPECT_EQ((*linked)[1], events[1]);
  linked = (*reader)->linkedEvents(runId, 1, 42);
  ASSERT_TRUE(linked.isOk());
  ASSERT_EQ(linked->size(), 2u);
  EXPECT_EQ((*linked)[0], events[2]);
  EXPECT_EQ((*linked)[1], events[3]);
  linked = (*reader)->linkedEvents(runId, 0, 43);  // the kernel alone
  ASSERT_TRUE(linked.isOk());
  ASSERT_EQ(linked->size(), 1u);
  EXPECT_EQ((*linked)[0], events[4]);
  linked = (*reader)->linkedEvents(runId, 0, 0);  // 0 links nothing
  ASSERT_TRUE(linked.isOk());
  EXPECT_TRUE(linked->empty());

  auto visited = std::vector<Event>();
  ASSERT_TRUE((*reader)
                  ->visitEvents(runId, 0,
                                [&](const Event& e) {
                                  visited.push_back(e);
                                  return Status::ok();
                                })
                  .isOk());
  ASSERT_EQ(visited.size(), 4u);
  EXPECT_EQ(visited[1].correlationId, 42);
  auto window = (*reader)->eventsInWindow(runId, {1}, 0, 100000);
  ASSERT_TRUE(window.isOk());
  ASSERT_EQ(window->size(), 2u);
  EXPECT_EQ((*window)[1].correlationId, 42);
}

// A v1 file built by the test opens; its events read as unlinked; a writer
// migrates it to v2 once, keeping every old row and its step windows.
TEST(TraceCorrelationTest, V1FilesOpenAndMigrateWhenAppendedTo) {
  for (bool withEventSteps : {false, true}) {
    SCOPED_TRACE(withEventSteps ? "v1 with event_steps" : "v1 before event_steps");
    TempDir dir;
    const std::string path = dir.file("v1.db");
    const std::vector<Event> old = oldEvents();
    ASSERT_EQ(testing::writeV1Trace(path, old, withEventSteps), "");
    ASSERT_EQ(metaVersion(path), "1");

    std::vector<StepSpan> spansBefore;
    {
      auto reader = TraceReader::open(path);
      ASSERT_TRUE(reader.isOk()) << reader.status().message();
      EXPECT_EQ((*reader)->schemaVersion(), 1);
      auto page = (*reader)->eventsAfter(1, 0);
      ASSERT_TRUE(page.isOk()) << page.status().message();
      EXPECT_EQ(page->events, old);  // every field, and correlation 0
      auto window = (*reader)->eventsInWindow(1, {}, 0, 1 << 30);
      ASSERT_TRUE(window.isOk()) << window.status().message();
      EXPECT_EQ(window->size(), old.size());
      auto linked = (*reader)->linkedEvents(1, 0, 42);
      ASSERT_TRUE(linked.isOk()) << linked.status().message();
      EXPECT_TRUE(linked->empty());
      auto spans = (*reader)->stepSpans(1);
      ASSERT_TRUE(spans.isOk());
      spansBefore = *spans;
      ASSERT_EQ(spansBefore.size(), 4u);  // ranks 0 and 1, steps 0 and 1
      EXPECT_EQ(spansBefore[0], (StepSpan{0, {0, 0, 2700}}));
      auto ranks = (*reader)->ranks(1);  // v1 has no ranks.parameters: read as unknown
      ASSERT_TRUE(ranks.isOk()) << ranks.status().message();
      ASSERT_EQ(ranks->size(), 2u);
      EXPECT_EQ((*ranks)[1].parameters, 0);
    }
    ASSERT_EQ(metaVersion(path), "1") << "a reader must not migrate";

    int64_t newRun = 0;
    const std::vector<Event> linkedPair = {launchEvent(0, 42, 100000), kernelEvent(0, 42, 105000)};
    for (int pass = 0; pass < 2; ++pass) {  // the second open finds v2: no migration
      auto writer = TraceWriter::open(path);
      ASSERT_TRUE(writer.isOk()) << writer.status().message();
      if (pass == 1) break;
      auto id = (*writer)->beginRun({.name = "new", .worldSize = 1});
      ASSERT_TRUE(id.isOk()) << id.status().message();
      newRun = *id;
      trace_model::RankInfo rank;
      rank.parameters = 30368;
      ASSERT_TRUE((*writer)->addRank(rank).isOk());
      ASSERT_TRUE((*writer)->appendEvents(linkedPair).isOk());
      ASSERT_TRUE((*writer)->finishRun(RunStatus::kFinished).isOk());
    }
    EXPECT_EQ(metaVersion(path), std::to_string(kSchemaVersion));

    auto reader = TraceReader::open(path);
    ASSERT_TRUE(reader.isOk()) << reader.status().message();
    EXPECT_EQ((*reader)->schemaVersion(), kSchemaVersion);
    auto page = (*reader)->eventsAfter(1, 0);
    ASSERT_TRUE(page.isOk());
    EXPECT_EQ(testing::sortedEvents(page->events), testing::sortedEvents(old));
    auto spans = (*reader)->stepSpans(1);
    ASSERT_TRUE(spans.isOk());
    EXPECT_EQ(*spans, spansBefore) << "old step windows kept (filled in by the migration)";
    auto ranks = (*reader)->ranks(newRun);
    ASSERT_TRUE(ranks.isOk()) << ranks.status().message();
    ASSERT_EQ(ranks->size(), 1u);
    EXPECT_EQ((*ranks)[0].parameters, 30368) << "the migrated file stores Ψ_rank";
    auto linked = (*reader)->linkedEvents(newRun, 0, 42);
    ASSERT_TRUE(linked.isOk());
    EXPECT_EQ(*linked, linkedPair);
    linked = (*reader)->linkedEvents(1, 0, 42);
    ASSERT_TRUE(linked.isOk());
    EXPECT_TRUE(linked->empty());
  }
}

}  // namespace
}  // namespace bubblescope::storage
