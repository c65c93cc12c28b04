#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "storage/schema.h"
#include "storage/trace_reader.h"
#include "storage/trace_writer.h"
#include "tests/storage/temp_dir.h"
#include "tests/storage/trace_fixtures.h"

namespace bubblescope::storage {
namespace {

using testing::makeEvent;
using testing::makeEvents;
using testing::TempDir;
using trace_model::Event;

RunInfo sampleRun() {
  RunInfo info;
  info.name = "dp2 tiny";
  info.layoutJson = R"({"dp":2})";
  info.modelJson = R"({"preset":"tiny"})";
  info.backend = "cpu";
  info.worldSize = 4;
  return info;
}

std::unique_ptr<TraceReader> openReader(const std::string& path) {
  auto reader = TraceReader::open(path);
  EXPECT_TRUE(reader.isOk()) << reader.status().message();
  return reader.isOk() ? std::move(reader).value() : nullptr;
}

TEST(TraceRoundTripTest, EveryFieldOfEveryRecordSurvives) {
  TempDir dir;
  const std::string path = dir.file("t.db");
  const auto events = makeEvents(0, 1000);
  RankInfo rank2{2, "node7", 4242, "cuda:1", 1, 0, 1, -1234, 56, 16, 4};
  std::vector<trace_model::StepRecord> steps = {
      {0, 0, 5.25, 4096, 10, 900}, {1, 0, std::numeric_limits<double>::quiet_NaN(), 4096, 12, 905}};
  std::vector<trace_model::Sample> samples = {
      {0, "cpu_util", 100, 0.75}, {0, "cpu_util", 200, 0.5}, {1, "rss_bytes", 150, 1.5e9}};
  int64_t runId = 0;
  {
    auto writer = TraceWriter::open(path, {.batchEvents = 128});
    ASSERT_TRUE(writer.isOk()) << writer.status().message();
    auto id = (*writer)->beginRun(sampleRun());
    ASSERT_TRUE(id.isOk()) << id.status().message();
    runId = *id;
    ASSERT_TRUE((*writer)->addRank(rank2).isOk());
    ASSERT_TRUE((*writer)->appendEvents(events).isOk());
    ASSERT_TRUE((*writer)->appendSteps(steps).isOk());
    ASSERT_TRUE((*writer)->appendSamples(samples).isOk());
    ASSERT_TRUE((*writer)->finishRun(RunStatus::kFinished).isOk());
  }
  auto reader = openReader(path);
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(reader->schemaVersion(), kSchemaVersion);

  auto run = reader->run(runId);
  ASSERT_TRUE(run.isOk()) << run.status().message();
  EXPECT_EQ(run->info.name, "dp2 tiny");
  EXPECT_EQ(run->info.layoutJson, R"({"dp":2})");
  EXPECT_EQ(run->info.modelJson, R"({"preset":"tiny"})");
  EXPECT_EQ(run->info.worldSize, 4);
  EXPECT_FALSE(run->info.simulated);
  EXPECT_EQ(run->status, RunStatus::kFinished);
  EXPECT_EQ(run->health, RunHealth::kFinished);
  EXPECT_EQ(run->eventCount, 1000);
  EXPECT_GT(run->endedUnixNs, 0);

  auto page = reader->eventsAfter(runId, 0, 5000);
  ASSERT_TRUE(page.isOk()) << page.status().message();
  ASSERT_EQ(page->events.size(), events.size());
  const auto stored = testing::sortedEvents(page->events), appended = testing::sortedEvents(events);
  for (size_t i = 0; i < events.size(); ++i) ASSERT_EQ(stored[i], appended[i]) << i;

  auto ranks = reader->ranks(runId);
  ASSERT_TRUE(ranks.isOk());
  ASSERT_EQ(ranks->size(), 4u);  // ranks 0, 1, 3 registered from their events
  EXPECT_EQ((*ranks)[2], rank2);
  EXPECT_EQ((*ranks)[3].rank, 3);

  auto gotSteps = reader->steps(runId);
  ASSERT_TRUE(gotSteps.isOk());
  ASSERT_EQ(gotSteps->size(), 2u);
  EXPECT_EQ((*gotSteps)[0], steps[0]);
  EXPECT_TRUE(std::isnan((*gotSteps)[1].loss));
  EXPECT_EQ((*gotSteps)[1].endNs, 905);

  auto gotSamples = reader->samples(runId, 0, "cpu_util");
  ASSERT_TRUE(gotSamples.isOk());
  ASSERT_EQ(gotSamples->size(), 2u);
  EXPECT_EQ((*gotSamples)[1], samples[1]);
  auto allSamples = reader->samples(runId);
  ASSERT_TRUE(allSamples.isOk());
  EXPECT_EQ(allSamples->size(), 3u);

  auto range = reader->timeRange(runId);
  ASSERT_TRUE(range.isOk());
  EXPECT_EQ(range->first, 0);
  EXPECT_EQ(range->second, events.back().endNs);
}

TEST(TraceRoundTripTest, WindowReturnsExactlyTheOverlappingEventsOfChosenRanks) {
  TempDir dir;
  const std::string path = dir.file("w.db");
  std::vector<Event> events = makeEvents(0, 2000);
  // A long event that starts well before the window and reaches into it.
  Event longOne = makeEvent(5);
  longOne.rank = 1;
  longOne.startNs = 100;
  longOne.endNs = 600000;
  events.push_back(longOne);
  {
    auto writer = TraceWriter::open(path);
    ASSERT_TRUE(writer.isOk());
    ASSERT_TRUE((*writer)->beginRun(sampleRun()).isOk());
    ASSERT_TRUE((*writer)->appendEvents(events).isOk());
  }
  auto reader = openReader(path);
  ASSERT_NE(reader, nullptr);
  const int64_t t0 = 500000, t1 = 750000;
  auto got = reader->eventsInWindow(1, {1, 3}, t0, t1);
  ASSERT_TRUE(got.isOk()) << got.status().message();
  std::vector<Event> expected;
  for (const auto& e : events) {
    if ((e.rank == 1 || e.rank == 3) && e.startNs < t1 && e.endNs > t0) expected.push_back(e);
  }
  std::stable_sort(expected.begin(), expected.end(), [](const Event& a, const Event& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.startNs < b.startNs;
  });
  ASSERT_EQ(got->size(), expected.size());
  EXPECT_EQ(*got, expected);
  EXPECT_EQ(got->front().startNs, 100);  // the long event is found

  auto allRanks = reader->eventsInWindow(1, {}, t0, t1);
  ASSERT_TRUE(allRanks.isOk());
  EXPECT_EQ(allRanks->size(), 250u + 1u);  // starts 500000..749000, plus the long one
}

TEST(TraceRoundTripTest, CursorPagesThroughEventsInOrder) {
  TempDir dir;
  const std::string path = dir.file("c.db");
  {
    auto writer = TraceWriter::open(path);
    ASSERT_TRUE(writer.isOk());
    ASSERT_TRUE((*writer)->beginRun(sampleRun()).isOk());
    ASSERT_TRUE((*writer)->appendEvents(makeEvents(0, 250)).isOk());
  }
  auto reader = openReader(path);
  ASSERT_NE(reader, nullptr);
  int64_t cursor = 0;
  std::vector<Event> seen;
  for (int page = 0; page < 10; ++page) {
    auto got = reader->eventsAfter(1, cursor, 100);
    ASSERT_TRUE(got.isOk());
    if (got->events.empty()) break;
    EXPECT_LE(got->events.size(), 100u);
    cursor = got->cursor;
    seen.insert(seen.end(), got->events.begin(), got->events.end());
  }
  EXPECT_EQ(testing::sortedEvents(seen), testing::sortedEvents(makeEvents(0, 250)));
}

TEST(TraceRoundTripTest, ReopeningAppendsANewRunAndKeepsTheOld) {
  TempDir dir;
  const std::string path = dir.file("two.db");
  for (int i = 0; i < 2; ++i) {
    auto writer = TraceWriter::open(path);
    ASSERT_TRUE(writer.isOk()) << writer.status().message();
    auto id = (*writer)->beginRun(sampleRun());
    ASSERT_TRUE(id.isOk());
    EXPECT_EQ(*id, i + 1);
    ASSERT_TRUE((*writer)->appendEvents(makeEvents(i * 10, 10)).isOk());
    ASSERT_TRUE((*writer)
                    ->finishRun(i == 0 ? RunStatus::kFinished : RunStatus::kFailed,
                                i == 0 ? "" : "rank 3 died (signal 9)")
                    .isOk());
  }
  auto reader = openReader(path);
  ASSERT_NE(reader, nullptr);
  auto runs = reader->runs();
  ASSERT_TRUE(runs.isOk());
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].health, RunHealth::kFinished);
  EXPECT_EQ((*runs)[1].health, RunHealth::kFailed);
  EXPECT_EQ((*runs)[1].error, "rank 3 died (signal 9)");
  auto second = reader->eventsAfter(2, 0);
  ASSERT_TRUE(second.isOk());
  EXPECT_EQ(testing::sortedEvents(second->events), testing::sortedEvents(makeEvents(10, 10)));
}

TEST(TraceRoundTripTest, WriterRejectsBadEventsAndCallsOutOfOrder) {
  TempDir dir;
  auto writer = TraceWriter::open(dir.file("bad.db"));
  ASSERT_TRUE(writer.isOk());
  Event e = makeEvent(1);
  Status noRun = (*writer)->appendEvents({&e, 1});
  EXPECT_EQ(noRun.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(noRun.message(), "appendEvents needs a run: call beginRun first");
  ASSERT_TRUE((*writer)->beginRun(sampleRun()).isOk());
  e.endNs = e.startNs - 1;
  Status backwards = (*writer)->appendEvents({&e, 1});
  EXPECT_EQ(backwards.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(backwards.message().find("ends before it starts"), std::string::npos);
  // A duration past int64 is refused, not wrapped into a negative length.
  e.startNs = std::numeric_limits<int64_t>::min() + 5;
  e.endNs = std::numeric_limits<int64_t>::max() - 5;
  Status endless = (*writer)->appendEvents({&e, 1});
  EXPECT_EQ(endless.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(endless.message().find("lasts longer than 2^63 ns"), std::string::npos)
      << endless.message();
  EXPECT_EQ((*writer)->beginRun(sampleRun()).status().code(), StatusCode::kFailedPrecondition);
}

TEST(TraceRoundTripTest, MissingRunIsNamed) {
  TempDir dir;
  const std::string path = dir.file("m.db");
  {
    auto writer = TraceWriter::open(path);
    ASSERT_TRUE(writer.isOk());
    ASSERT_TRUE((*writer)->beginRun(sampleRun()).isOk());
  }
  auto reader = openReader(path);
  ASSERT_NE(reader, nullptr);
  auto run = reader->run(9);
  ASSERT_FALSE(run.isOk());
  EXPECT_EQ(run.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(run.status().message(), "run 9 is not in " + path + " (runs: 1)");
}

}  // namespace
}  // namespace bubblescope::storage

namespace bubblescope::storage {
namespace {

// The launcher begins a run, rank 0 attaches and writes, the launcher ends it.
TEST(TraceRunOwnershipTest, AttachToARunAndEndItFromAnotherWriter) {
  testing::TempDir dir;
  const std::string path = dir.file("own.db");
  int64_t runId = 0;
  {
    auto launcher = TraceWriter::open(path);
    ASSERT_TRUE(launcher.isOk());
    auto id = (*launcher)->beginRun({.name = "job", .worldSize = 2});
    ASSERT_TRUE(id.isOk());
    runId = *id;
  }
  {
    auto rank0 = TraceWriter::open(path);
    ASSERT_TRUE(rank0.isOk());
    ASSERT_TRUE((*rank0)->attachRun(runId).isOk());
    ASSERT_TRUE((*rank0)->appendEvents(testing::makeEvents(0, 10)).isOk());
    EXPECT_EQ((*rank0)->attachRun(runId).code(), StatusCode::kFailedPrecondition);
  }
  {
    auto rank0 = TraceWriter::open(path);
    ASSERT_TRUE(rank0.isOk());
    ASSERT_TRUE((*rank0)->attachRun(runId).isOk());  // counts carry on
    ASSERT_TRUE((*rank0)->appendEvents(testing::makeEvents(10, 5)).isOk());
  }
  auto launcher = TraceWriter::open(path);
  ASSERT_TRUE(launcher.isOk());
  ASSERT_TRUE((*launcher)
                  ->endDetachedRun(runId, RunStatus::kFailed, "rank 1 was killed (signal 9)")
                  .isOk());
  Status again = (*launcher)->endDetachedRun(runId, RunStatus::kFinished, "");
  EXPECT_EQ(again.message(), "run 1 is not a running run of " + path);
  EXPECT_EQ((*launcher)->attachRun(runId).message(), "run 1 has already failed");
  EXPECT_EQ((*launcher)->attachRun(7).code(), StatusCode::kNotFound);

  auto reader = TraceReader::open(path);
  ASSERT_TRUE(reader.isOk());
  auto run = (*reader)->run(runId);
  ASSERT_TRUE(run.isOk());
  EXPECT_EQ(run->health, RunHealth::kFailed);
  EXPECT_EQ(run->error, "rank 1 was killed (signal 9)");
  EXPECT_EQ(run->eventCount, 15);
  auto page = (*reader)->eventsAfter(runId, 0);
  ASSERT_TRUE(page.isOk());
  EXPECT_EQ(testing::sortedEvents(page->events), testing::sortedEvents(testing::makeEvents(0, 15)));
}

}  // namespace
}  // namespace bubblescope::storage

#include <sqlite3.h>

#include <map>

namespace bubblescope::storage {
namespace {

// Step windows kept by the writer across many committed batches equal the
// windows aggregated from the events, and files without the summary table
// (written before it existed) still answer by scanning.
TEST(TraceStepSpansTest, WriterSummaryMatchesTheEventsAcrossBatches) {
  testing::TempDir dir;
  const std::string path = dir.file("steps.db");
  const auto events = testing::makeEvents(0, 5000);
  {
    auto writer = TraceWriter::open(path, {.batchEvents = 128});
    ASSERT_TRUE(writer.isOk());
    ASSERT_TRUE((*writer)->beginRun({}).isOk());
    for (size_t i = 0; i < events.size(); i += 700) {
      const size_t n = std::min<size_t>(700, events.size() - i);
      ASSERT_TRUE((*writer)->appendEvents({events.data() + i, n}).isOk());
    }
    ASSERT_TRUE((*writer)->finishRun(RunStatus::kFinished).isOk());
  }
  std::map<std::pair<int32_t, int32_t>, std::pair<int64_t, int64_t>> truth;
  for (const auto& e : events) {
    auto [it, inserted] = truth.try_emplace({e.rank, e.step}, e.startNs, e.endNs);
    it->second = {std::min(it->second.first, e.startNs), std::max(it->second.second, e.endNs)};
  }
  std::vector<StepSpan> expected;
  for (const auto& [key, span] : truth) {
    expected.push_back({key.first, {key.second, span.first, span.second}});
  }
  ASSERT_EQ(expected.size(), 4u * 50u);
  auto readSpans = [&]() -> std::vector<StepSpan> {
    auto reader = TraceReader::open(path);
    EXPECT_TRUE(reader.isOk());
    if (!reader.isOk()) return {};
    auto spans = (*reader)->stepSpans(1);
    EXPECT_TRUE(spans.isOk()) << spans.status().message();
    return spans.isOk() ? *spans : std::vector<StepSpan>{};
  };
  EXPECT_EQ(readSpans(), expected) << "from the writer's summary";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DROP TABLE event_steps", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  EXPECT_EQ(readSpans(), expected) << "from the events, without the summary";
}

}  // namespace
}  // namespace bubblescope::storage
