// Files that are not Kineto traces: one clear message each, and no run left
// looking finished (a file refused before its first event begins no run; a
// file that breaks later leaves its run marked failed with the message).
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "storage/import/trace_file_stream.h"
#include "tests/import/imported_runs.h"
#include "tests/storage/temp_dir.h"

namespace bubblescope::import {
namespace {

std::string write(const testing::TempDir& dir, const std::string& name, const std::string& bytes) {
  const std::string path = dir.file(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// The message of an import of `path` that must fail, and no run in the file.
std::string refused(const testing::TempDir& dir, const std::string& path) {
  const std::string db = dir.file("refused.db");
  auto imported = testing::importPaths(db, {path});
  EXPECT_FALSE(imported.isOk());
  if (imported.isOk()) return "";
  auto reader = storage::TraceReader::open(db);
  EXPECT_TRUE(reader.isOk());
  if (reader.isOk()) {
    auto runs = (*reader)->runs();
    EXPECT_TRUE(runs.isOk() && runs->empty()) << "a refused file began a run";
  }
  return imported.status().message();
}

TEST(BadInputImport, FilesThatAreNeitherJsonNorGzipSayWhatTheyAre) {
  testing::TempDir dir;
  EXPECT_EQ(refused(dir, write(dir, "empty.json", "")),
            dir.file("empty.json") + ": not a Kineto trace: the file is empty");
  EXPECT_EQ(refused(dir, write(dir, "report.sqlite", std::string("SQLite format 3\0abc", 19))),
            dir.file("report.sqlite") +
                ": not a Kineto trace: a SQLite database, not a Kineto "
                "JSON trace");
  // The gzip magic with its second byte damaged: no longer "malformed JSON at byte 1".
  EXPECT_EQ(refused(dir, write(dir, "broken.json.gz", std::string("\x1f\x00\x08\x00junk", 8))),
            dir.file("broken.json.gz") +
                ": not a Kineto trace: a broken gzip header: the file begins 1f 00 08 00 6a 75 "
                "6e 6b, gzip data begins 1f 8b");
  EXPECT_EQ(refused(dir, write(dir, "trace.zst", "\x28\xb5\x2f\xfd rest")),
            dir.file("trace.zst") +
                ": not a Kineto trace: neither JSON nor gzip: the file begins 28 b5 2f fd 20 72 "
                "65 73 (a Kineto trace is JSON text, or gzip beginning 1f 8b)");
  // JSON after blanks and a byte order mark is JSON.
  auto bom = TraceFileStream::open(write(dir, "bom.json", "\xef\xbb\xbf \n{\"traceEvents\": []}"));
  EXPECT_TRUE(bom.isOk()) << bom.status().message();
}

TEST(BadInputImport, ATopLevelArrayThatIsNotATraceBeginsNoRun) {
  testing::TempDir dir;
  const std::string path = write(dir, "layers.json", R"([{"layers": 12}, {"heads": 4}])");
  EXPECT_EQ(refused(dir, path),
            path +
                ": not a Kineto trace: a top-level JSON array of 2 values, none of them a "
                "trace event (an object with \"ph\"); entry 0 is an object without \"ph\"");
}

// gzip that breaks after the header: the events before stay, the run says
// it failed and why.
TEST(BadInputImport, CorruptGzipLeavesTheRunMarkedFailed) {
  testing::TempDir dir;
  std::string json = R"({"traceEvents": [)";
  for (int i = 0; i < 2000; ++i) {
    json += std::string(i ? "," : "") + R"({"ph":"X","cat":"cpu_op","name":"op)" +
            std::to_string(i) + R"(","pid":1,"tid":1,"ts":)" + std::to_string(10 * i) +
            R"(,"dur":5})";
  }
  json += "]}";
  // gzip with stored (uncompressed) deflate blocks, cut after the first
  // half: the events of that half parse, then the data ends early.
  std::string gzip("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff", 10);
  for (size_t at = 0; at < json.size(); at += 1000) {
    const std::string block = json.substr(at, 1000);
    const auto n = static_cast<uint16_t>(block.size());
    gzip += '\0';  // not the final block; stored
    gzip += static_cast<char>(n & 0xff);
    gzip += static_cast<char>(n >> 8);
    gzip += static_cast<char>(~n & 0xff);
    gzip += static_cast<char>((~n >> 8) & 0xff);
    gzip += block;
  }
  const std::string gz = write(dir, "cut.json.gz", gzip.substr(0, gzip.size() / 2));
  const std::string db = dir.file("t.db");
  auto imported = testing::importPaths(db, {gz});
  ASSERT_FALSE(imported.isOk());
  EXPECT_EQ(imported.status().message(), gz + ": truncated gzip data (the file ends early)");
  auto reader = storage::TraceReader::open(db);
  ASSERT_TRUE(reader.isOk());
  auto runs = (*reader)->runs();
  ASSERT_TRUE(runs.isOk());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].status, storage::RunStatus::kFailed);
  EXPECT_EQ((*runs)[0].error, imported.status().message());
}

}  // namespace
}  // namespace bubblescope::import
