// Schema v6 (events in blocks): files of every older schema open as they
// are, migrate when a writer opens them, and read back the same events
// through every query, also through a reader opened before the migration;
// a file the migration cannot read stays as it was; damaged blocks give one
// error naming the file.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>

#include "storage/schema.h"
#include "storage/trace_reader.h"
#include "storage/trace_writer.h"
#include "tests/storage/schema_history.h"
#include "tests/storage/temp_dir.h"
#include "tests/storage/trace_fixtures.h"

namespace bubblescope::storage {
namespace {

using testing::TempDir;
using trace_model::Event;

constexpr const char* kNames[] = {"forward", "backward", "dp.bucket0", "send", "optimizer"};

// 600 events of ranks 0 and 1 over 300 µs; every 10th of a rank is an
// enclosing span appended after the 9 it encloses (it starts before them),
// as a tracer appends spans when they end.
std::vector<Event> historyEvents() {
  std::vector<Event> events;
  for (int i = 0; i < 600; ++i) {
    const int32_t seq = i / 2;
    Event e;
    e.rank = i % 2;
    e.kind = static_cast<trace_model::EventKind>(i % 7);
    e.lane = static_cast<trace_model::Lane>(i % 3);
    e.name = kNames[(i / 3) % 5];
    const bool enclosing = seq % 10 == 9;
    e.startNs = (enclosing ? seq - 9 : seq) * 1000 + e.rank * 3;
    e.endNs = seq * 1000 + 900;
    e.step = seq / 50;
    e.microBatch = seq % 4 == 3 ? -1 : seq % 4;
    e.stage = e.rank;
    e.chunk = i % 11 == 0 ? 1 : -1;
    e.dim = static_cast<trace_model::ParallelDim>(i % 4);
    e.bytes = (i % 7) * 4096;
    e.flops = 1000000000LL + i;
    e.peer = i % 5 == 0 ? 1 - e.rank : -1;
    e.correlationId = i % 4 == 0 || i % 4 == 2 ? 500 + i / 4 : 0;  // pairs on rank 0
    e.cpuNs = i % 5 == 0 ? -1 : 300 + i;
    events.push_back(e);
  }
  return events;
}

// What a file of `version` holds of `e`: no correlation before v2, no CPU
// time before v5.
Event asStoredIn(Event e, int version) {
  if (version < 2) e.correlationId = 0;
  if (version < 5) e.cpuNs = -1;
  return e;
}

std::vector<Event> asStoredIn(const std::vector<Event>& events, int version) {
  std::vector<Event> out;
  for (const Event& e : events) out.push_back(asStoredIn(e, version));
  return out;
}

// The events of `ranks` that overlap [t0, t1), by rank, then start, ties in
// append order: what eventsInWindow and visitEvents return.
std::vector<Event> byRankAndStart(const std::vector<Event>& events, std::vector<int32_t> ranks,
                                  int64_t t0, int64_t t1) {
  std::vector<Event> out;
  for (int32_t rank : ranks) {
    std::vector<Event> mine;
    for (const Event& e : events) {
      if (e.rank == rank && e.startNs < t1 && e.endNs > t0) mine.push_back(e);
    }
    std::stable_sort(mine.begin(), mine.end(),
                     [](const Event& a, const Event& b) { return a.startNs < b.startNs; });
    out.insert(out.end(), mine.begin(), mine.end());
  }
  return out;
}

// The first column of the first row of `sql` on `path`, as text.
std::string queryText(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr);
  std::string v;
  if (sqlite3_step(stmt) == SQLITE_ROW) {
    v = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return v;
}

std::string metaVersion(const std::string& path) {
  return queryText(path, "SELECT value FROM meta WHERE key = 'schema_version'");
}

// Every event query of `reader` on run 1 against `expected` (in append order).
void expectSameEvents(TraceReader& reader, const std::vector<Event>& expected, bool appendOrder) {
  for (int32_t rank : {0, 1}) {
    std::vector<Event> visited;
    ASSERT_TRUE(reader
                    .visitEvents(1, rank,
                                 [&](const Event& e) {
                                   visited.push_back(e);
                                   return Status::ok();
                                 })
                    .isOk());
    EXPECT_EQ(visited, byRankAndStart(expected, {rank}, INT64_MIN, INT64_MAX)) << "rank " << rank;
  }
  for (auto [t0, t1] : {std::pair<int64_t, int64_t>{100000, 200000}, {0, 1}, {299000, 400000}}) {
    auto window = reader.eventsInWindow(1, {}, t0, t1);
    ASSERT_TRUE(window.isOk()) << window.status().message();
    EXPECT_EQ(*window, byRankAndStart(expected, {0, 1}, t0, t1)) << t0 << ".." << t1;
  }
  auto window = reader.eventsInWindow(1, {1}, 150500, 150600);
  ASSERT_TRUE(window.isOk());
  EXPECT_EQ(*window, byRankAndStart(expected, {1}, 150500, 150600));
  EXPECT_FALSE(window->empty()) << "enclosing spans that start long before the window";

  auto page = reader.eventsAfter(1, 0);
  ASSERT_TRUE(page.isOk()) << page.status().message();
  if (appendOrder) {
    EXPECT_EQ(page->events, expected);
  } else {
    EXPECT_EQ(testing::sortedEvents(page->events), testing::sortedEvents(expected));
  }
  std::vector<Event> paged;  // pages of 7 resume where the last one ended
  for (int64_t cursor = 0;;) {
    auto next = reader.eventsAfter(1, cursor, 7);
    ASSERT_TRUE(next.isOk()) << next.status().message();
    ASSERT_LE(next->events.size(), 7u);
    if (next->events.empty()) break;
    paged.insert(paged.end(), next->events.begin(), next->events.end());
    cursor = next->cursor;
  }
  EXPECT_EQ(paged, page->events);
  // spansAfter: the same events with their names' ids, the same cursors,
  // page by page; an id reads back as the event's name.
  for (int64_t cursor = 0;;) {
    auto events = reader.eventsAfter(1, cursor, 7);
    auto spans = reader.spansAfter(1, cursor, 7);
    ASSERT_TRUE(events.isOk() && spans.isOk());
    ASSERT_EQ(spans->cursor, events->cursor);
    ASSERT_EQ(spans->spans.size(), events->events.size());
    for (size_t i = 0; i < spans->spans.size(); ++i) {
      const Event& e = events->events[i];
      EXPECT_EQ(spans->spans[i], (EventSpan{.startNs = e.startNs,
                                            .endNs = e.endNs,
                                            .rank = e.rank,
                                            .chunk = e.chunk,
                                            .lane = e.lane,
                                            .kind = e.kind,
                                            .dim = e.dim,
                                            .nameId = spans->spans[i].nameId}));
      auto name = reader.eventName(spans->spans[i].nameId);
      ASSERT_TRUE(name.isOk()) << name.status().message();
      EXPECT_EQ(*name, e.name);
    }
    if (events->events.empty()) break;
    cursor = events->cursor;
  }

  auto linked = reader.linkedEvents(1, 0, 500 + 40);  // events 160 and 162
  ASSERT_TRUE(linked.isOk()) << linked.status().message();
  std::vector<Event> pair;
  if (expected[160].correlationId != 0) pair = {expected[160], expected[162]};
  EXPECT_EQ(*linked, pair);
}

TEST(TraceSchemaV6Test, FilesOfEveryOlderSchemaReadMigrateAndReadTheSame) {
  const std::vector<Event> events = historyEvents();
  for (int version = 1; version <= 5; ++version) {
    SCOPED_TRACE("schema v" + std::to_string(version));
    TempDir dir;
    const std::string path = dir.file("old.db");
    ASSERT_EQ(testing::writeTraceAtVersion(path, events, version), "");
    const std::vector<Event> stored = asStoredIn(events, version);

    auto live = TraceReader::open(path);  // opened before the migration
    ASSERT_TRUE(live.isOk()) << live.status().message();
    EXPECT_EQ((*live)->schemaVersion(), version);
    expectSameEvents(**live, stored, /*appendOrder=*/true);
    auto spans = (*live)->stepSpans(1);
    ASSERT_TRUE(spans.isOk());
    const std::vector<StepSpan> spansBefore = *spans;
    EXPECT_EQ(metaVersion(path), std::to_string(version)) << "a reader must not migrate";

    for (int pass = 0; pass < 2; ++pass) {  // the second open finds v6: nothing to do
      auto writer = TraceWriter::open(path);
      ASSERT_TRUE(writer.isOk()) << writer.status().message();
      if (pass == 1) break;
      ASSERT_TRUE((*writer)->beginRun({.name = "new", .worldSize = 1}).isOk());
      ASSERT_TRUE(
          (*writer)->appendEvents(std::vector<Event>(events.begin(), events.begin() + 9)).isOk());
      ASSERT_TRUE((*writer)->finishRun(RunStatus::kFinished).isOk());
    }
    EXPECT_EQ(metaVersion(path), std::to_string(kSchemaVersion));

    expectSameEvents(**live, stored, /*appendOrder=*/false);
    auto reader = TraceReader::open(path);
    ASSERT_TRUE(reader.isOk()) << reader.status().message();
    EXPECT_EQ((*reader)->schemaVersion(), kSchemaVersion);
    expectSameEvents(**reader, stored, /*appendOrder=*/false);
    spans = (*reader)->stepSpans(1);
    ASSERT_TRUE(spans.isOk());
    EXPECT_EQ(*spans, spansBefore);
    auto run = (*reader)->run(1);
    ASSERT_TRUE(run.isOk());
    EXPECT_EQ(run->eventCount, static_cast<int64_t>(events.size()));
    auto added = (*reader)->eventsAfter(2, 0);
    ASSERT_TRUE(added.isOk());
    EXPECT_EQ(testing::sortedEvents(added->events),
              testing::sortedEvents({events.begin(), events.begin() + 9}));
  }
}

// The migration drops the v5 `events` table (a row of about 60 bytes an
// event and two indexes) for blocks of a few bytes an event: it gives the
// freed pages back (VACUUM), so the file shrinks and has no free page left.
TEST(TraceSchemaV6Test, TheMigrationGivesBackTheSpaceOfTheOldEvents) {
  std::vector<Event> events;
  for (int copy = 0; copy < 20; ++copy) {  // 12,000 events: many pages of rows
    for (Event e : historyEvents()) {
      e.startNs += copy * 400000;
      e.endNs += copy * 400000;
      e.correlationId = 0;
      events.push_back(e);
    }
  }
  TempDir dir;
  const std::string path = dir.file("v5.db");
  ASSERT_EQ(testing::writeTraceAtVersion(path, events, 5), "");
  const auto sizeBefore = std::filesystem::file_size(path);
  {
    auto writer = TraceWriter::open(path);  // migrates
    ASSERT_TRUE(writer.isOk()) << writer.status().message();
  }
  EXPECT_EQ(metaVersion(path), std::to_string(kSchemaVersion));
  EXPECT_EQ(queryText(path, "PRAGMA freelist_count"), "0");
  const auto sizeAfter = std::filesystem::file_size(path);
  EXPECT_LT(sizeAfter, sizeBefore / 2) << sizeBefore << " bytes before the migration";
  auto reader = TraceReader::open(path);
  ASSERT_TRUE(reader.isOk()) << reader.status().message();
  auto all = (*reader)->eventsAfter(1, 0, 1 << 20);
  ASSERT_TRUE(all.isOk());
  EXPECT_EQ(testing::sortedEvents(all->events), testing::sortedEvents(events));
}

// A v5 file whose rows the migration cannot store (a rank beyond 32 bits) is
// refused with one message naming it, and keeps its version and every row.
TEST(TraceSchemaV6Test, AFileTheMigrationCannotReadStaysAsItWas) {
  TempDir dir;
  const std::string path = dir.file("bad.db");
  const std::vector<Event> events = historyEvents();
  ASSERT_EQ(testing::writeTraceAtVersion(path, events, 5), "");
  ASSERT_EQ(testing::execOn(path, "UPDATE events SET rank = 1099511627776 WHERE id = 5"), "");
  auto writer = TraceWriter::open(path);
  ASSERT_FALSE(writer.isOk());
  EXPECT_EQ(writer.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(writer.status().message(),
            "cannot migrate the trace schema from v5: " + path +
                " is corrupt: rank 1099511627776 is outside 0..2147483647");
  EXPECT_EQ(metaVersion(path), "5");
  auto reader = TraceReader::open(path);
  ASSERT_TRUE(reader.isOk()) << reader.status().message();
  auto page = (*reader)->eventsAfter(1, 0);
  EXPECT_FALSE(page.isOk()) << "the corrupt rank still reads as corrupt";
  std::vector<Event> visited;
  ASSERT_TRUE((*reader)
                  ->visitEvents(1, 0,
                                [&](const Event& e) {
                                  visited.push_back(e);
                                  return Status::ok();
                                })
                  .isOk());
  EXPECT_EQ(visited.size(), 299u) << "rank 0's other rows are all there";
}

TEST(TraceSchemaV6Test, ADamagedBlockIsOneErrorNamingTheFile) {
  TempDir dir;
  const std::string path = dir.file("t.db");
  {
    auto writer = TraceWriter::open(path);
    ASSERT_TRUE(writer.isOk());
    ASSERT_TRUE((*writer)->beginRun({.name = "r", .worldSize = 2}).isOk());
    ASSERT_TRUE((*writer)->appendEvents(historyEvents()).isOk());
    ASSERT_TRUE((*writer)->finishRun(RunStatus::kFinished).isOk());
  }
  ASSERT_EQ(testing::execOn(path, "UPDATE event_blocks SET data = x'05ff' WHERE rank = 0"), "");
  auto reader = TraceReader::open(path);
  ASSERT_TRUE(reader.isOk());
  const Status s = (*reader)->visitEvents(1, 0, [](const Event&) { return Status::ok(); });
  EXPECT_EQ(s.code(), StatusCode::kCorrupt);
  EXPECT_EQ(s.message().rfind(path + " is corrupt: event block is damaged at its event 0", 0), 0u)
      << s.message();
  EXPECT_NE(s.message().find("(block "), std::string::npos) << s.message();
  auto window = (*reader)->eventsInWindow(1, {}, 0, 1000000);
  EXPECT_EQ(window.status().code(), StatusCode::kCorrupt);
}

}  // namespace
}  // namespace bubblescope::storage
