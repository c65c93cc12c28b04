// Every bad input gets one clear error naming the problem, and no crash; a
// file that is not ours is never modified.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

#include "storage/schema.h"
#include "storage/trace_reader.h"
#include "storage/trace_writer.h"
#include "tests/storage/temp_dir.h"
#include "tests/storage/trace_fixtures.h"
#include "tests/storage/unprivileged_child.h"

namespace bubblescope::storage {
namespace {

using testing::makeEvents;
using testing::TempDir;

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeAll(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// A finished trace with enough events to span many pages, WAL checkpointed.
void writeTrace(const std::string& path, int64_t events = 20000) {
  auto writer = TraceWriter::open(path);
  ASSERT_TRUE(writer.isOk()) << writer.status().message();
  ASSERT_TRUE((*writer)->beginRun({}).isOk());
  ASSERT_TRUE((*writer)->appendEvents(makeEvents(0, events)).isOk());
  ASSERT_TRUE((*writer)->finishRun(RunStatus::kFinished).isOk());
}

void execSql(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

// Both the reader and the writer refuse `path` with `code` and `message`,
// and the file's bytes are unchanged afterwards.
void expectRefused(const std::string& path, StatusCode code, const std::string& message) {
  const std::string before = readAll(path);
  auto reader = TraceReader::open(path);
  ASSERT_FALSE(reader.isOk());
  EXPECT_EQ(reader.status().code(), code);
  EXPECT_EQ(reader.status().message(), message);
  auto writer = TraceWriter::open(path);
  ASSERT_FALSE(writer.isOk());
  EXPECT_EQ(writer.status().message(), message);
  EXPECT_EQ(readAll(path), before) << "a refused file was modified";
}

// A damaged schema whose SQL holds control bytes and a C1 "next line"
// (U+0085, which Python's splitlines and some terminals break lines on):
// SQLite quotes the damaged SQL in its message, and the message stays one
// printable line (issue 32's fuzz harness: an `info` whose last stderr
// "line" was " (the file is damaged)").
TEST(TraceBadInputTest, ADamagedSchemaIsOnePrintableLine) {
  TempDir dir;
  const std::string path = dir.file("schema.db");
  writeTrace(path, 10);
  execSql(path,
          "PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = 'CREATE TABLE "
          "calibration_links(' || char(28) || char(11) || char(133) || 'x' WHERE name = "
          "'calibration_links';");
  auto reader = TraceReader::open(path);
  ASSERT_FALSE(reader.isOk());
  const std::string message = reader.status().message();
  EXPECT_NE(message.find("malformed database schema"), std::string::npos) << message;
  for (unsigned char c : message) {
    EXPECT_TRUE(c >= 0x20 && c < 0x7f) << "byte " << static_cast<int>(c) << " in: " << message;
  }
}

TEST(TraceBadInputTest, MissingFile) {
  TempDir dir;
  const std::string path = dir.file("nope.db");
  auto reader = TraceReader::open(path);
  ASSERT_FALSE(reader.isOk());
  EXPECT_EQ(reader.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(reader.status().message(), "trace file " + path + " does not exist");
  EXPECT_FALSE(std::filesystem::exists(path)) << "the reader must not create files";
}

TEST(TraceBadInputTest, FileThatIsNotSqlite) {
  TempDir dir;
  const std::string path = dir.file("notes.db");
  writeAll(path, std::string("step,loss\n0,5.5\n1,5.1\n") + std::string(4000, 'x'));
  expectRefused(path, StatusCode::kUnsupported,
                path + " is not a Bubblescope trace: it is not a SQLite database");
}

TEST(TraceBadInputTest, SqliteDatabaseOfAnotherProgram) {
  TempDir dir;
  const std::string path = dir.file("other.db");
  execSql(path,
          "CREATE TABLE photos(id INTEGER PRIMARY KEY, name TEXT);"
          "INSERT INTO photos(name) VALUES ('cat.jpg');");
  expectRefused(path, StatusCode::kUnsupported,
                path +
                    " is not a Bubblescope trace: a SQLite database from another program (it "
                    "has no Bubblescope meta table)");
}

TEST(TraceBadInputTest, ForeignMetaTable) {
  TempDir dir;
  const std::string path = dir.file("meta.db");
  execSql(path,
          "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
          "INSERT INTO meta VALUES ('application', 'nsys');");
  expectRefused(path, StatusCode::kUnsupported,
                path +
                    " is not a Bubblescope trace: a SQLite database from another program "
                    "(meta.application is 'nsys')");
}

TEST(TraceBadInputTest, NewerSchemaVersion) {
  TempDir dir;
  const std::string path = dir.file("future.db");
  writeTrace(path, 10);
  const std::string future = std::to_string(kSchemaVersion + 1);
  execSql(path, ("UPDATE meta SET value = '" + future + "' WHERE key = 'schema_version'").c_str());
  expectRefused(path, StatusCode::kUnsupported,
                path + " was written with trace schema v" + future +
                    "; this build of Bubblescope reads up to v" + std::to_string(kSchemaVersion) +
                    ": upgrade Bubblescope");
}

TEST(TraceBadInputTest, TruncatedFile) {
  TempDir dir;
  const std::string path = dir.file("cut.db");
  writeTrace(path);
  const std::string bytes = readAll(path);
  ASSERT_GT(bytes.size(), 64u * 1024u);
  const size_t keep = bytes.size() / 2 / 4096 * 4096;
  writeAll(path, bytes.substr(0, keep));
  expectRefused(path, StatusCode::kCorrupt,
                path + " is truncated: its header describes " + std::to_string(bytes.size()) +
                    " bytes but it has " + std::to_string(keep));
  // Cut in the middle of a page, too.
  writeAll(path, bytes.substr(0, 5000));
  auto reader = TraceReader::open(path);
  ASSERT_FALSE(reader.isOk());
  EXPECT_EQ(reader.status().code(), StatusCode::kCorrupt);
}

TEST(TraceBadInputTest, CorruptPagesGiveAnErrorNotACrash) {
  TempDir dir;
  const std::string path = dir.file("bad.db");
  writeTrace(path);
  std::string bytes = readAll(path);
  // Keep the header and the schema page; scramble every later page.
  uint32_t x = 12345;
  for (size_t i = 8192; i < bytes.size(); ++i) {
    x = x * 1664525u + 1013904223u;
    bytes[i] = static_cast<char>(x >> 24);
  }
  writeAll(path, bytes);
  auto reader = TraceReader::open(path);
  if (!reader.isOk()) {
    EXPECT_EQ(reader.status().code(), StatusCode::kCorrupt) << reader.status().message();
    return;
  }
  auto events = (*reader)->eventsAfter(1, 0);
  auto window = (*reader)->eventsInWindow(1, {}, 0, 1LL << 40);
  auto runs = (*reader)->runs();
  const bool anyFailed = !events.isOk() || !window.isOk() || !runs.isOk();
  ASSERT_TRUE(anyFailed) << "scrambled pages read back without an error";
  for (const Status& s : {events.status(), window.status(), runs.status()}) {
    if (s.isOk()) continue;
    EXPECT_EQ(s.code(), StatusCode::kCorrupt) << s.message();
    EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
  }
}

TEST(TraceBadInputTest, EmptyFileIsNotATraceForTheReader) {
  TempDir dir;
  const std::string path = dir.file("empty.db");
  writeAll(path, "");
  auto reader = TraceReader::open(path);
  ASSERT_FALSE(reader.isOk());
  EXPECT_EQ(reader.status().message(),
            path + " is not a Bubblescope trace: it is not a SQLite database");
  // The writer may start a new trace in an empty file (e.g. one mktemp made).
  auto writer = TraceWriter::open(path);
  EXPECT_TRUE(writer.isOk()) << writer.status().message();
}

// Root ignores directory permissions, so the check runs in a child that
// drops to an unprivileged user first.
TEST(TraceBadInputTest, WriterInReadOnlyDirectory) {
  TempDir dir;
  std::filesystem::permissions(
      dir.path(), std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                      std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                      std::filesystem::perms::others_exec);
  const std::string path = dir.file("t.db");
  const auto child = testing::runAsNobody([&] {
    auto writer = TraceWriter::open(path);
    return writer.isOk() ? std::string("opened") : writer.status().message();
  });
  ASSERT_TRUE(child.ran) << "could not drop privileges";
  const std::string& message = child.message;
  EXPECT_EQ(message, "cannot create trace file " + path + ": directory " + dir.path().string() +
                         " is not writable (Permission denied)");
  EXPECT_FALSE(std::filesystem::exists(path));
}

// A rank id beyond int32 (2^40) in a file is refused as corrupt by every
// reader call that returns ranks, instead of wrapping to rank 0.
TEST(TraceBadInputTest, RankIdBeyondInt32IsCorrupt) {
  TempDir dir;
  const std::string path = dir.file("rank.db");
  {
    auto writer = TraceWriter::open(path);
    ASSERT_TRUE(writer.isOk()) << writer.status().message();
    ASSERT_TRUE((*writer)->beginRun({.name = "r", .worldSize = 1}).isOk());
    ASSERT_TRUE((*writer)->addRank({.rank = 0}).isOk());
    ASSERT_TRUE((*writer)->appendEvents(makeEvents(0, 10, 1)).isOk());
    const trace_model::StepRecord step{
        .rank = 0, .step = 0, .loss = 1.0, .tokens = 8, .startNs = 0, .endNs = 10};
    ASSERT_TRUE((*writer)->appendSteps({&step, 1}).isOk());
    const trace_model::Sample sample{
        .rank = 0, .name = "mem.parameters", .timeNs = 1, .value = 2.0};
    ASSERT_TRUE((*writer)->appendSamples({&sample, 1}).isOk());
    ASSERT_TRUE((*writer)->finishRun(RunStatus::kFinished).isOk());
  }
  execSql(path,
          "UPDATE ranks SET rank = 1099511627776; UPDATE steps SET rank = 1099511627776; "
          "UPDATE samples SET rank = 1099511627776; UPDATE event_blocks SET rank = 1099511627776;"
          "UPDATE event_steps SET rank = 1099511627776");
  auto reader = TraceReader::open(path);
  ASSERT_TRUE(reader.isOk()) << reader.status().message();
  const std::string message = path + " is corrupt: rank 1099511627776 is outside 0..2147483647";
  auto expectCorrupt = [&](const Status& s, const char* what) {
    EXPECT_EQ(s.code(), StatusCode::kCorrupt) << what << ": " << s.message();
    EXPECT_EQ(s.message(), message) << what;
  };
  expectCorrupt((*reader)->ranks(1).status(), "ranks");
  expectCorrupt((*reader)->steps(1).status(), "steps");
  expectCorrupt((*reader)->samples(1, -1, "").status(), "samples");
  expectCorrupt((*reader)->stepSpans(1).status(), "stepSpans");
  expectCorrupt((*reader)->samplePeaks(1, "mem.parameters").status(), "samplePeaks");
  expectCorrupt((*reader)->eventsInWindow(1, {}, 0, std::numeric_limits<int64_t>::max()).status(),
                "eventsInWindow");
}

}  // namespace
}  // namespace bubblescope::storage
