// The JSON schema of docs/report-format.md, the terminal and Markdown tables,
// and the comparison of two runs.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "storage/analysis/report_json.h"
#include "storage/analysis/report_text.h"
#include "storage/analysis/run_analyzer.h"
#include "storage/analysis/run_comparison.h"
#include "storage/analysis/text_table.h"
#include "tests/analysis/trace_builder.h"

namespace bubblescope::analysis {
namespace {

using json = nlohmann::ordered_json;
using testing::rankInfo;
using testing::span;
using testing::stepRecord;
using testing::TraceBuilder;
using trace_model::EventKind;
using trace_model::ParallelDim;

// Two runs: dp 2 (an all-reduce each step) and the same work on one rank.
class ReportRenderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<trace_model::Event> events;
    std::vector<trace_model::StepRecord> steps;
    std::vector<storage::RankInfo> ranks;
    for (int32_t rank = 0; rank < 2; ++rank) {
      ranks.push_back(rankInfo(rank, rank, 0, 0));
      ranks.back().parameters = 125;
      events.push_back(span(rank, EventKind::kForward, 0, 40, 0));
      events.push_back(span(rank, EventKind::kAllReduce, 20, 60, 0, ParallelDim::kDp, 1000));
      steps.push_back(stepRecord(rank, 0, 0, 100, rank == 0 ? 3.5 : NAN, 256));
    }
    a_ = trace_.run({.name = "dp2",
                     .layoutJson = R"({"dp": 2, "zero_stage": 0, "grad_compression": "topk:0.25"})",
                     .worldSize = 2,
                     .ranks = ranks,
                     .events = events,
                     .steps = steps,
                     .samples = {{0, "mem.parameters", 5, 500}}});
    b_ = trace_.run({.name = "single",
                     .layoutJson = R"({"dp": 1})",
                     .ranks = {rankInfo(0, 0, 0, 0)},
                     .events = {span(0, EventKind::kForward, 0, 80, 0)},
                     .steps = {stepRecord(0, 0, 0, 80, 3.25, 256)}});
    auto reader = storage::TraceReader::open(trace_.path());
    ASSERT_TRUE(reader.isOk());
    auto ra = analyzeRun(**reader, a_);
    auto rb = analyzeRun(**reader, b_);
    ASSERT_TRUE(ra.isOk() && rb.isOk());
    reportA_ = *ra;
    reportB_ = *rb;
  }

  TraceBuilder trace_;
  int64_t a_ = 0, b_ = 0;
  RunReport reportA_, reportB_;
};

TEST_F(ReportRenderTest, JsonHasTheDocumentedSchemaAndValues) {
  const json j = reportToJson({reportA_});
  ASSERT_EQ(j["runs"].size(), 1u);
  const json& run = j["runs"][0];
  for (const char* key :
       {"id", "name", "status", "error", "source", "backend", "world_size", "events", "layout",
        "steps", "step_time_ms", "ranks", "stages", "tokens_per_s", "slowest_rank", "slowest_stage",
        "stragglers", "comm_volume", "notes"}) {
    EXPECT_TRUE(run.contains(key)) << key;
  }
  EXPECT_EQ(run["id"], a_);
  EXPECT_EQ(run["status"], "finished");
  EXPECT_EQ(run["layout"]["dp"], 2);
  EXPECT_EQ(run["steps"], json::parse(R"([{"step": 0, "loss": 3.5, "tokens": 256,
                                          "time_ms": 0.0001}])"));
  EXPECT_DOUBLE_EQ(run["tokens_per_s"].get<double>(), 256 / 100e-9);
  ASSERT_EQ(run["ranks"].size(), 2u);
  const json& r0 = run["ranks"][0];
  EXPECT_EQ(r0["rank"], 0);
  EXPECT_EQ(r0["dp"], 0);
  EXPECT_EQ(r0["tp"], 0);
  EXPECT_EQ(r0["pp"], 0);
  EXPECT_DOUBLE_EQ(r0["utilization"].get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(r0["comm_ratio"].get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(r0["overlap"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(r0["idle_ratio"].get<double>(), 0.4);
  EXPECT_EQ(r0["comm_by_dim"], json::parse(R"({"dp": {"time_ms": 0.00004, "bytes": 1000.0}})"));
  EXPECT_EQ(r0["memory_bytes"],
            json::parse(R"({"parameters": 500, "gradients": null, "optimizer": null,
                            "activations": null})"));
  EXPECT_EQ(r0["memory_formula_bytes"],
            json::parse(R"({"parameters": 500, "gradients": 500, "optimizer": 1000,
                            "activations": null})"));
  ASSERT_EQ(run["stages"].size(), 1u);
  EXPECT_EQ(run["stages"][0]["stage"], 0);
  EXPECT_DOUBLE_EQ(run["stages"][0]["bubble_fraction"].get<double>(), 0.4);
  EXPECT_EQ(run["stages"][0]["bubble_formula"], 0.0);
  EXPECT_EQ(run["stragglers"], json::array());
  EXPECT_EQ(run["comm_volume"], json::parse(R"([{"dim": "dp+zero",
      "measured_bytes_per_step": 2000.0, "formula_bytes_per_step": 1016.0}])"));
}

TEST_F(ReportRenderTest, UnknownValuesAreNull) {
  const json run = runToJson(reportB_);
  EXPECT_TRUE(run["ranks"][0]["overlap"].is_null());
  EXPECT_TRUE(run["stragglers"].empty());
  const json empty = runToJson(RunReport{});
  EXPECT_TRUE(empty["tokens_per_s"].is_null());
  EXPECT_TRUE(empty["step_time_ms"]["mean"].is_null());
  EXPECT_TRUE(empty["slowest_rank"].is_null());
}

TEST_F(ReportRenderTest, TerminalAndMarkdownTables) {
  const std::string text = reportToText(reportA_, /*markdown=*/false);
  EXPECT_NE(text.find("run 1  dp2  [finished]  cpu, world 2, measured, 4 events\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("layout: dp2 tp1 pp1 zero0 1f1b m=1 b=1 params=42.88K\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("rank  dp/tp/pp  step ms   util   comm  overlap  exposed  wait   idle"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("0        0/0/0    0.000  40.0%  40.0%    50.0%    20.0%  0.0%  40.0%  dp "
                      "0.000 ms 1000 B\n"),
            std::string::npos)
      << text;
  const std::string md = reportToText(reportA_, /*markdown=*/true);
  EXPECT_NE(md.find("## run 1  dp2"), std::string::npos) << md;
  EXPECT_NE(md.find("| rank | dp/tp/pp | step ms |"), std::string::npos) << md;
  EXPECT_NE(md.find("| ---- | -------: |"), std::string::npos) << md;
}

TEST(TextTableTest, AlignsColumns) {
  const TextTable t{{"name", "value"}, {{"a", "1"}, {"long name", "12345"}}};
  EXPECT_EQ(t.render(false),
            "name       value\n"
            "----------------\n"
            "a              1\n"
            "long name  12345\n");
  EXPECT_EQ(t.render(true),
            "| name      | value |\n"
            "| --------- | ----: |\n"
            "| a         |     1 |\n"
            "| long name | 12345 |\n");
  EXPECT_EQ(formatBytes(1536.0), "1.50 KiB");
  EXPECT_EQ(formatPercent(0.1234), "12.3%");
  EXPECT_EQ(formatPercent(std::nullopt), "-");
}

TEST_F(ReportRenderTest, CompareShowsLayoutsMetricsAndChanges) {
  const auto rows = compareRuns(reportA_, reportB_);
  auto find = [&](const std::string& metric) {
    for (const auto& r : rows) {
      if (r.metric == metric) return r;
    }
    ADD_FAILURE() << "no row " << metric;
    return ComparisonRow{};
  };
  const auto dp = find("dp");
  EXPECT_EQ(dp.a, "2");
  EXPECT_EQ(dp.b, "1");
  EXPECT_EQ(dp.change, "changed");
  const auto time = find("step time mean (ms)");
  EXPECT_EQ(time.a, "0.000");
  EXPECT_EQ(time.change, "-20.0%");
  const auto util = find("utilization (mean over ranks)");
  EXPECT_EQ(util.a, "40.0%");
  EXPECT_EQ(util.b, "100.0%");
  EXPECT_EQ(util.change, "+60.0 pp");
  EXPECT_EQ(find("overlap").b, "-");
  EXPECT_EQ(find("tokens/s").change, "+25.0%");
  const auto compression = find("grad compression");
  EXPECT_EQ(compression.a, "topk:0.25");
  EXPECT_EQ(compression.b, "none");
  EXPECT_EQ(compression.change, "changed");
  EXPECT_EQ(find("all-reduce").change, "same");
  EXPECT_EQ(find("inter-node link").a, "not emulated");
  // What a step computes: the model, and the global batch dp changes
  // (dp 2 -> 1 halves it).
  const auto model = find("model");
  EXPECT_EQ(model.a, "tiny");
  EXPECT_EQ(model.change, "same");
  const int64_t seq = layout::modelPreset("tiny")->seqLen;
  const auto batch = find("global batch");
  EXPECT_EQ(batch.a, "2 sequences (" + std::to_string(2 * seq) + " tokens)");
  EXPECT_EQ(batch.b, "1 sequence (" + std::to_string(seq) + " tokens)");
  EXPECT_EQ(batch.change, "changed");
}

}  // namespace
}  // namespace bubblescope::analysis
