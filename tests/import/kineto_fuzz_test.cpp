// Fuzzing the importer with truncations and mutations of the real traces:
// every input ends in success or in one clear error, never in a crash, and a
// failed import leaves a failed run behind, not a running one.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <random>

#include "storage/import/kineto_importer.h"
#include "storage/import/trace_file_stream.h"
#include "storage/trace_reader.h"
#include "storage/trace_writer.h"
#include "tests/import/kineto_fixtures.h"
#include "tests/storage/temp_dir.h"

namespace bubblescope::import {
namespace {

const char* kSmall = "amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz";

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string inflated(const std::string& path) {
  auto s = TraceFileStream::open(path);
  EXPECT_TRUE(s.isOk());
  return {std::istreambuf_iterator<char>((*s)->stream()), std::istreambuf_iterator<char>()};
}

void write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// Imports `file` into its own trace; returns the error message ("" on success).
std::string importOne(const bubblescope::testing::TempDir& dir, const std::string& file) {
  auto writer = storage::TraceWriter::open(dir.file("fuzz.db"));
  EXPECT_TRUE(writer.isOk());
  auto summary = importKineto(**writer, {file}, {});
  return summary.isOk() ? "" : summary.status().message();
}

TEST(KinetoFuzz, TruncatedGzipSaysSo) {
  BS_REQUIRE_KINETO_FIXTURES();
  bubblescope::testing::TempDir dir;
  const std::string gz = readAll(testing::kinetoFixture(kSmall));
  ASSERT_GT(gz.size(), 1000u);
  std::mt19937 rng(17);
  for (int i = 0; i < 20; ++i) {
    const size_t cut = std::uniform_int_distribution<size_t>(2, gz.size() - 9)(rng);
    write(dir.file("cut.json.gz"), gz.substr(0, cut));
    const std::string error = importOne(dir, dir.file("cut.json.gz"));
    EXPECT_NE(error.find("cut.json.gz: "), std::string::npos) << error;
    EXPECT_TRUE(error.find("truncated gzip data") != std::string::npos ||
                error.find("corrupt gzip data") != std::string::npos)
        << "cut at " << cut << ": " << error;
  }
}

TEST(KinetoFuzz, TruncatedJsonIsMalformed) {
  BS_REQUIRE_KINETO_FIXTURES();
  bubblescope::testing::TempDir dir;
  const std::string json = inflated(testing::kinetoFixture(kSmall));
  std::mt19937 rng(18);
  for (int i = 0; i < 20; ++i) {
    const size_t cut = std::uniform_int_distribution<size_t>(0, json.size() - 10)(rng);
    write(dir.file("cut.json"), json.substr(0, cut));
    const std::string error = importOne(dir, dir.file("cut.json"));
    EXPECT_NE(error.find("malformed JSON at byte"), std::string::npos)
        << "cut at " << cut << ": " << error;
  }
  auto reader = storage::TraceReader::open(dir.file("fuzz.db"));
  ASSERT_TRUE(reader.isOk());
  auto runs = (*reader)->runs();
  ASSERT_TRUE(runs.isOk());
  for (const auto& r : *runs) EXPECT_EQ(r.status, storage::RunStatus::kFailed);
}

TEST(KinetoFuzz, MutatedBytesNeverCrash) {
  BS_REQUIRE_KINETO_FIXTURES();
  bubblescope::testing::TempDir dir;
  const std::string json = inflated(testing::kinetoFixture(kSmall));
  const std::string alphabet = "{}[]\":,-.0123456789eE \\tnulfase";
  std::mt19937 rng(19);
  int failures = 0;
  for (int i = 0; i < 150; ++i) {
    std::string m = json;
    const int edits = std::uniform_int_distribution<int>(1, 8)(rng);
    for (int k = 0; k < edits; ++k) {
      const size_t at = std::uniform_int_distribution<size_t>(0, m.size() - 1)(rng);
      switch (std::uniform_int_distribution<int>(0, 2)(rng)) {
        case 0:
          m[at] = alphabet[std::uniform_int_distribution<size_t>(0, alphabet.size() - 1)(rng)];
          break;
        case 1:
          m.erase(at, std::uniform_int_distribution<size_t>(1, 40)(rng));
          break;
        default:
          m.insert(at, 1,
                   alphabet[std::uniform_int_distribution<size_t>(0, alphabet.size() - 1)(rng)]);
      }
    }
    write(dir.file("mutated.json"), m);
    const std::string error = importOne(dir, dir.file("mutated.json"));
    if (!error.empty()) {
      ++failures;
      EXPECT_EQ(error.find('\n'), std::string::npos) << error;  // one line
      EXPECT_EQ(error.rfind(dir.file("mutated.json") + ": ", 0), 0u) << error;
    }
  }
  EXPECT_GT(failures, 0);  // most mutations break the JSON
}

}  // namespace
}  // namespace bubblescope::import
