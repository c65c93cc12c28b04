// Imported runs downstream: the run says it is imported and claims no
// parallel degrees it does not know; report and compare work on it with
// figures checked against Holistic Trace Analysis's (scripts/hta_crosscheck.py
// prints HTA's: nccl_data rank 0 idle 0.7616, compute 0.1751; trace_filter
// rank 0 idle 0.5521, compute 0.1720, rank 1 idle 0.5289, compute 0.2209).
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "storage/analysis/report_json.h"
#include "storage/analysis/report_text.h"
#include "storage/analysis/run_analyzer.h"
#include "storage/analysis/run_comparison.h"
#include "tests/import/imported_runs.h"
#include "tests/storage/temp_dir.h"

namespace bubblescope::import {
namespace {

using testing::importFiles;

const char* kNccl = "nccl_parser_config/nccl_data.json.gz";
const std::vector<std::string> kTraceFilter = {"trace_filter/sampled_rank-0.json.gz",
                                               "trace_filter/sampled_rank-1.json.gz"};

std::map<std::string, analysis::ComparisonRow> byMetric(
    const std::vector<analysis::ComparisonRow>& rows) {
  std::map<std::string, analysis::ComparisonRow> out;
  for (const auto& r : rows) out[r.metric] = r;
  return out;
}

TEST(ImportedRun, SaysImportedAndClaimsNoDegrees) {
  BS_REQUIRE_KINETO_FIXTURES();
  bubblescope::testing::TempDir dir;
  auto imported = importFiles(dir.file("t.db"), kTraceFilter);
  ASSERT_TRUE(imported.isOk()) << imported.status().message();
  storage::TraceReader& reader = *imported->reader;
  auto run = reader.run(imported->summary.runId);
  ASSERT_TRUE(run.isOk());
  EXPECT_TRUE(run->info.imported);
  EXPECT_FALSE(run->info.simulated);
  EXPECT_STREQ(storage::sourceName(run->info), "imported");
  EXPECT_EQ(run->info.worldSize, 128);  // distributedInfo.world_size, not the 2 files
  auto ranks = reader.ranks(run->id);
  ASSERT_TRUE(ranks.isOk());
  for (const auto& r : *ranks) {
    EXPECT_EQ(r.dp, -1);
    EXPECT_EQ(r.tp, -1);
    EXPECT_EQ(r.pp, -1);
  }
  auto report = analysis::analyzeRun(reader, run->id);
  ASSERT_TRUE(report.isOk()) << report.status().message();
  EXPECT_FALSE(report->layout.has_value());
  EXPECT_TRUE(report->stages.empty());  // no stage is known: no bubble table
  const std::string text = analysis::reportToText(*report, false);
  EXPECT_NE(text.find("cuda, world 128, imported, 9485 events"), std::string::npos) << text;
  EXPECT_NE(text.find("layout: imported kineto traces: 2 files of world 128; parallel "
                      "dimensions unknown"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("0        -/-/-"), std::string::npos) << text;
  EXPECT_EQ(text.find("dp1"), std::string::npos) << text;
  EXPECT_EQ(text.find("Pipeline stages"), std::string::npos) << text;
  const auto json = analysis::reportToJson({*report});
  const auto& j = json["runs"][0];
  EXPECT_EQ(j["source"], "imported");
  EXPECT_TRUE(j["ranks"][0]["dp"].is_null());
  EXPECT_TRUE(j["ranks"][1]["pp"].is_null());
  EXPECT_EQ(j["layout"]["source"], "kineto");
}

TEST(ImportedRun, ANamedGroupGivesItsDimensionAndCoordinate) {
  BS_REQUIRE_KINETO_FIXTURES();
  bubblescope::testing::TempDir dir;
  ImportOptions options;
  options.groups = {{"default_pg", "dp"}};
  auto imported = importFiles(dir.file("t.db"), {kNccl}, options);
  ASSERT_TRUE(imported.isOk()) << imported.status().message();
  auto ranks = imported->reader->ranks(imported->summary.runId);
  ASSERT_TRUE(ranks.isOk());
  ASSERT_EQ(ranks->size(), 1u);
  EXPECT_EQ((*ranks)[0].dp, 0);  // rank 0's place in default_pg's ranks [0, 1]
  EXPECT_EQ((*ranks)[0].tp, -1);
  EXPECT_EQ((*ranks)[0].pp, -1);
  auto report = analysis::analyzeRun(*imported->reader, imported->summary.runId);
  ASSERT_TRUE(report.isOk()) << report.status().message();
  const std::string text = analysis::reportToText(*report, false);
  EXPECT_NE(text.find("layout: imported kineto traces: 1 file of world 2; group 0 (default_pg, "
                      "2 ranks) dp; other dimensions unknown"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("0/-/-"), std::string::npos) << text;
}

TEST(ImportedRun, CompareTwoImportedJobs) {
  BS_REQUIRE_KINETO_FIXTURES();
  bubblescope::testing::TempDir dir;
  auto a = importFiles(dir.file("t.db"), {kNccl});
  ASSERT_TRUE(a.isOk()) << a.status().message();
  auto b = importFiles(dir.file("t.db"), kTraceFilter);
  ASSERT_TRUE(b.isOk()) << b.status().message();
  ASSERT_EQ(b->summary.runId, a->summary.runId + 1);  // one file, two runs
  auto reportA = analysis::analyzeRun(*b->reader, a->summary.runId);
  auto reportB = analysis::analyzeRun(*b->reader, b->summary.runId);
  ASSERT_TRUE(reportA.isOk() && reportB.isOk());
  auto rows = byMetric(analysis::compareRuns(*reportA, *reportB));
  auto expectRow = [&](const std::string& metric, const std::string& x, const std::string& y,
                       const std::string& change) {
    ASSERT_EQ(rows.count(metric), 1u) << metric;
    const auto& r = rows[metric];
    EXPECT_EQ(r.a, x) << metric;
    EXPECT_EQ(r.b, y) << metric;
    EXPECT_EQ(r.change, change) << metric;
  };
  expectRow("source", "imported", "imported", "same");
  expectRow("world size", "2", "128", "changed");
  expectRow("dp", "-", "-", "same");  // no degree claimed on either side
  expectRow("steps", "3", "2", "changed");
  // HTA's figures (header comment): idle 76.2% against the mean of 55.2%
  // and 52.9%; compute 17.5% against the mean of 17.2% and 22.1%.
  expectRow("GPU idle", "76.2%", "54.1%", "-22.1 pp");
  expectRow("GPU compute", "17.5%", "19.6%", "+2.1 pp");
  expectRow("GPU busy (mean over ranks)", "23.8%", "45.9%", "+22.1 pp");
  // Volume per step: all-reduces count twice (docs/formulas.md). nccl_data:
  // (2 x 306684384 + 638712) / 3 steps; trace_filter: the mean over ranks of
  // (2 x all-reduce + all-to-all + all-gather bytes) / 2 steps.
  expectRow("comm volume unknown per step", "195.19 MiB", "1.66 GiB", "+771.0%");
}

TEST(ImportedRun, CompareAnImportWithItself) {
  BS_REQUIRE_KINETO_FIXTURES();
  bubblescope::testing::TempDir dir;
  auto a = importFiles(dir.file("t.db"), kTraceFilter);
  ASSERT_TRUE(a.isOk()) << a.status().message();
  auto b = importFiles(dir.file("t.db"), kTraceFilter);
  ASSERT_TRUE(b.isOk()) << b.status().message();
  auto reportA = analysis::analyzeRun(*b->reader, a->summary.runId);
  auto reportB = analysis::analyzeRun(*b->reader, b->summary.runId);
  ASSERT_TRUE(reportA.isOk() && reportB.isOk());
  auto rows = byMetric(analysis::compareRuns(*reportA, *reportB));
  EXPECT_EQ(rows["step time mean (ms)"].a, "616.073");
  EXPECT_EQ(rows["step time mean (ms)"].change, "same");
  EXPECT_EQ(rows["GPU non-compute"].a, "26.3%");  // HTA: mean of 27.59% and 25.02%
  EXPECT_EQ(rows["GPU non-compute"].change, "+0.0 pp");
  EXPECT_EQ(rows["overlap"].change, "+0.0 pp");
  EXPECT_EQ(rows["stragglers"].change, "same");
}

}  // namespace
}  // namespace bubblescope::import
