// Schema v7: ranks.gpu_clock_uncertainty_ns, the error bound of a rank's
// CUPTI -> host clock conversion. Written and read back; a v6 file (v7
// without that column: v7's one migration undone) reads -1 (unknown) for
// every rank, as it is, and a writer migrates it to v7 keeping every rank.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "storage/schema.h"
#include "storage/trace_reader.h"
#include "storage/trace_writer.h"
#include "tests/storage/schema_history.h"
#include "tests/storage/temp_dir.h"

namespace bubblescope::storage {
namespace {

using testing::TempDir;

RankInfo rankOf(int32_t rank, int64_t gpuBoundNs) {
  RankInfo r;
  r.rank = rank;
  r.host = "node" + std::to_string(rank);
  r.pid = 100 + rank;
  r.device = gpuBoundNs >= 0 ? "cuda:" + std::to_string(rank) : "cpu";
  r.clockOffsetNs = 7000 * rank;
  r.clockUncertaintyNs = 300;
  r.gpuClockUncertaintyNs = gpuBoundNs;
  r.coresOnHost = 8;
  r.ranksOnHost = 1;
  r.parameters = 12345;
  return r;
}

Status writeRun(const std::string& path, const std::vector<RankInfo>& ranks) {
  auto writer = TraceWriter::open(path);
  if (!writer.isOk()) return writer.status();
  BS_RETURN_IF_ERROR((*writer)->beginRun({.name = "gpu", .worldSize = 2}).status());
  for (const RankInfo& r : ranks) BS_RETURN_IF_ERROR((*writer)->addRank(r));
  return (*writer)->finishRun(RunStatus::kFinished);
}

std::vector<RankInfo> readRanks(const std::string& path, int64_t run, int32_t* version = nullptr) {
  auto reader = TraceReader::open(path);
  EXPECT_TRUE(reader.isOk()) << reader.status().message();
  if (!reader.isOk()) return {};
  if (version != nullptr) *version = (*reader)->schemaVersion();
  auto ranks = (*reader)->ranks(run);
  EXPECT_TRUE(ranks.isOk()) << ranks.status().message();
  return ranks.isOk() ? *ranks : std::vector<RankInfo>{};
}

TEST(TraceSchemaV7Test, AGpuRanksClockBoundIsStoredAndACpuRanksIsUnknown) {
  TempDir dir;
  const std::string path = dir.file("v7.db");
  const std::vector<RankInfo> ranks = {rankOf(0, 2417), rankOf(1, -1)};
  ASSERT_TRUE(writeRun(path, ranks).isOk());
  int32_t version = 0;
  EXPECT_EQ(readRanks(path, 1, &version), ranks);
  EXPECT_EQ(version, 7);
  EXPECT_EQ(RankInfo{}.gpuClockUncertaintyNs, -1);  // unknown unless a GPU map set it
}

TEST(TraceSchemaV7Test, AV6FileReadsUnknownBoundsAndMigratesKeepingItsRanks) {
  TempDir dir;
  const std::string path = dir.file("v6.db");
  const std::vector<RankInfo> ranks = {rankOf(0, 2417), rankOf(1, 99)};
  ASSERT_TRUE(writeRun(path, ranks).isOk());
  // v6 is v7 without the column (v7's only change).
  ASSERT_EQ(testing::execOn(path,
                            "ALTER TABLE ranks DROP COLUMN gpu_clock_uncertainty_ns;"
                            "UPDATE meta SET value = '6' WHERE key = 'schema_version';"),
            "");
  std::vector<RankInfo> asV6 = ranks;
  for (RankInfo& r : asV6) r.gpuClockUncertaintyNs = -1;
  int32_t version = 0;
  EXPECT_EQ(readRanks(path, 1, &version), asV6);
  EXPECT_EQ(version, 6);

  // A writer migrates it; the old run's ranks stay unknown, a new run's bound is kept.
  ASSERT_TRUE(writeRun(path, {rankOf(0, 555)}).isOk());
  EXPECT_EQ(readRanks(path, 1, &version), asV6);
  EXPECT_EQ(version, kSchemaVersion);
  EXPECT_EQ(readRanks(path, 2), std::vector<RankInfo>{rankOf(0, 555)});
}

}  // namespace
}  // namespace bubblescope::storage
