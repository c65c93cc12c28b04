// TraceFileStream's counters, which drive import progress: a .gz file's
// decoded text outgrows its bytes, and progress lines follow the text.
#include "storage/import/trace_file_stream.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <fstream>
#include <iterator>
#include <string>

#include "storage/import/import_summary.h"
#include "tests/storage/temp_dir.h"

namespace bubblescope::import {
namespace {

// A compressible trace of `events` complete events.
std::string traceText(int events) {
  std::string json = R"({"traceEvents": [)";
  for (int i = 0; i < events; ++i) {
    json += std::string(i ? "," : "") + R"({"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":)" +
            std::to_string(10 * i) + R"(,"dur":5})";
  }
  return json + "]}";
}

TEST(TraceFileStreamTest, GzipCountsFileBytesAndTextBytesApart) {
  testing::TempDir dir;
  const std::string text = traceText(20000);
  const std::string path = dir.file("t.json.gz");
  gzFile gz = gzopen(path.c_str(), "wb9");
  ASSERT_NE(gz, nullptr);
  ASSERT_EQ(gzwrite(gz, text.data(), static_cast<unsigned>(text.size())),
            static_cast<int>(text.size()));
  ASSERT_EQ(gzclose(gz), Z_OK);

  auto in = TraceFileStream::open(path);
  ASSERT_TRUE(in.isOk()) << in.status().message();
  EXPECT_TRUE((*in)->gzip());
  const std::string read((std::istreambuf_iterator<char>((*in)->stream())),
                         std::istreambuf_iterator<char>());
  EXPECT_EQ(read, text);
  EXPECT_EQ((*in)->error(), "");
  EXPECT_EQ((*in)->bytesRead(), (*in)->fileBytes()) << "the whole file was read";
  EXPECT_EQ((*in)->textBytes(), static_cast<int64_t>(text.size()));
  EXPECT_LT((*in)->fileBytes() * 5, (*in)->textBytes()) << "repetitive JSON compresses well";
}

TEST(TraceFileStreamTest, PlainTextBytesAreTheFileBytes) {
  testing::TempDir dir;
  const std::string text = traceText(100);
  const std::string path = dir.file("t.json");
  std::ofstream(path, std::ios::binary) << text;
  auto in = TraceFileStream::open(path);
  ASSERT_TRUE(in.isOk()) << in.status().message();
  const std::string read((std::istreambuf_iterator<char>((*in)->stream())),
                         std::istreambuf_iterator<char>());
  EXPECT_EQ((*in)->textBytes(), (*in)->bytesRead());
  EXPECT_EQ((*in)->textBytes(), static_cast<int64_t>(text.size()));
}

// A small .gz that inflates past the threshold shows progress; a small file
// whose text stays small does not.
TEST(TraceFileStreamTest, ProgressFollowsTheDecodedText) {
  ImportProgress small;
  small.fileBytes = small.bytesRead = small.textBytes = 1 << 20;
  EXPECT_FALSE(showsProgress(small));
  ImportProgress gz;
  gz.fileBytes = 20LL << 20;
  gz.bytesRead = 5LL << 20;
  gz.textBytes = kProgressMinBytes;
  EXPECT_TRUE(showsProgress(gz));
  gz.textBytes = kProgressMinBytes - 1;
  EXPECT_FALSE(showsProgress(gz));
  ImportProgress big;
  big.fileBytes = kProgressMinBytes;
  EXPECT_TRUE(showsProgress(big)) << "a big file shows progress from its first line";
}

}  // namespace
}  // namespace bubblescope::import
