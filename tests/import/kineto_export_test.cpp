// export --format kineto: an imported run written back as Kineto traces
// imports again to the same events, steps and GPU figures.
#include "storage/analysis/kineto_export.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "storage/analysis/run_analyzer.h"
#include "storage/import/kineto_importer.h"
#include "storage/trace_reader.h"
#include "storage/trace_writer.h"
#include "tests/import/kineto_fixtures.h"
#include "tests/storage/temp_dir.h"

namespace bubblescope::import {
namespace {

struct RunFigures {
  std::map<std::pair<int32_t, trace_model::EventKind>, int64_t> kindsByRank;
  std::map<std::pair<int32_t, trace_model::EventKind>, int64_t> bytesByRank;
  std::vector<trace_model::StepRecord> steps;
  std::vector<analysis::GpuTime> gpu;
};

RunFigures figures(storage::TraceReader& reader, int64_t runId) {
  RunFigures f;
  int64_t cursor = 0;
  for (;;) {
    auto page = reader.eventsAfter(runId, cursor);
    EXPECT_TRUE(page.isOk());
    if (!page.isOk() || page->events.empty()) break;
    for (const auto& e : page->events) {
      ++f.kindsByRank[{e.rank, e.kind}];
      f.bytesByRank[{e.rank, e.kind}] += e.bytes;
    }
    cursor = page->cursor;
  }
  auto steps = reader.steps(runId);
  EXPECT_TRUE(steps.isOk());
  f.steps = *steps;
  auto report = analysis::analyzeRun(reader, runId);
  EXPECT_TRUE(report.isOk());
  for (const auto& r : report->ranks) {
    EXPECT_TRUE(r.gpu.has_value());
    if (r.gpu) f.gpu.push_back(*r.gpu);
  }
  return f;
}

TEST(KinetoExport, ImportedRunRoundTrips) {
  BS_REQUIRE_KINETO_FIXTURES();
  bubblescope::testing::TempDir dir;
  const std::string db = dir.file("t.db");
  {
    auto writer = storage::TraceWriter::open(db);
    ASSERT_TRUE(writer.isOk());
    auto s = importKineto(**writer,
                          {testing::kinetoFixture("trace_filter/sampled_rank-0.json.gz"),
                           testing::kinetoFixture("trace_filter/sampled_rank-1.json.gz")},
                          {});
    ASSERT_TRUE(s.isOk()) << s.status().message();
  }
  auto reader = storage::TraceReader::open(db);
  ASSERT_TRUE(reader.isOk());
  auto exported = analysis::exportKinetoTraces(**reader, 1, dir.file("kineto"));
  ASSERT_TRUE(exported.isOk()) << exported.status().message();
  ASSERT_EQ(exported->files.size(), 2u);

  // distributedInfo and the device are in each file.
  std::ifstream in(exported->files[1]);
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["distributedInfo"]["rank"], 1);
  EXPECT_EQ(j["distributedInfo"]["world_size"], 128);
  EXPECT_EQ(j["distributedInfo"]["backend"], "nccl");
  EXPECT_EQ(j["deviceProperties"][0]["id"], 1);

  {
    auto writer = storage::TraceWriter::open(db);
    ASSERT_TRUE(writer.isOk());
    auto s = importKineto(**writer, exported->files, {});
    ASSERT_TRUE(s.isOk()) << s.status().message();
    EXPECT_EQ(s->runId, 2);
  }
  auto again = storage::TraceReader::open(db);
  ASSERT_TRUE(again.isOk());
  const RunFigures a = figures(**again, 1), b = figures(**again, 2);
  EXPECT_EQ(a.kindsByRank, b.kindsByRank);
  EXPECT_EQ(a.bytesByRank, b.bytesByRank);
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {  // field by field: the losses are NaN
    EXPECT_EQ(a.steps[i].rank, b.steps[i].rank);
    EXPECT_EQ(a.steps[i].step, b.steps[i].step);
    EXPECT_EQ(a.steps[i].startNs, b.steps[i].startNs);
    EXPECT_EQ(a.steps[i].endNs, b.steps[i].endNs);
  }
  ASSERT_EQ(a.gpu.size(), 2u);
  ASSERT_EQ(b.gpu.size(), 2u);
  for (size_t i = 0; i < a.gpu.size(); ++i) {
    EXPECT_EQ(a.gpu[i].windowNs, b.gpu[i].windowNs);
    EXPECT_EQ(a.gpu[i].busyNs, b.gpu[i].busyNs);
    EXPECT_EQ(a.gpu[i].computeNs, b.gpu[i].computeNs);
    EXPECT_EQ(a.gpu[i].commNs, b.gpu[i].commNs);
    EXPECT_EQ(a.gpu[i].overlapNs, b.gpu[i].overlapNs);
  }
}

}  // namespace
}  // namespace bubblescope::import
