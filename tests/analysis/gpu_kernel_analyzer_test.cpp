// The GPU kernel tables end to end: GpuKernelAnalyzer (gpu_kernel_analyzer.h)
// on one rank's hand-made events (which records count, the join to their
// launches), then a two-rank run through analyzeRun and the three renderers
// (report's text, Markdown and JSON). Every expected figure is worked out by
// hand in the comments (times in ns).
#include "storage/analysis/gpu_kernel_analyzer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "storage/analysis/report_json.h"
#include "storage/analysis/report_text.h"
#include "storage/analysis/run_analyzer.h"
#include "tests/analysis/trace_builder.h"

namespace bubblescope::analysis {
namespace {

using trace_model::EventKind;
using trace_model::KernelType;
using trace_model::Lane;

trace_model::Event launch(int32_t rank, const std::string& name, int64_t correlation, int64_t start,
                          int64_t end) {
  trace_model::Event e;
  e.rank = rank;
  e.lane = Lane::kCudaApi;
  e.kind = EventKind::kOther;
  e.name = name;
  e.startNs = start;
  e.endNs = end;
  e.correlationId = correlation;
  return e;
}

trace_model::Event record(int32_t rank, EventKind kind, const std::string& name, int32_t stream,
                          int64_t correlation, int64_t start, int64_t end, int64_t bytes = 0) {
  trace_model::Event e;
  e.rank = rank;
  e.lane = trace_model::gpuStreamLane(stream);
  e.kind = kind;
  e.name = name;
  e.startNs = start;
  e.endNs = end;
  e.correlationId = correlation;
  e.bytes = bytes;
  return e;
}

// One rank's events in start order. Launch calls last 10 ns.
std::vector<trace_model::Event> rankEvents(int32_t rank, int64_t gemmNs) {
  return {
      // Launched before the profile: correlation 5 has no launch.
      record(rank, EventKind::kKernel, "gemm", 7, 5, 0, 50),
      launch(rank, "cudaLaunchKernel", 11, 100, 110),
      launch(rank, "cudaLaunchKernel", 12, 105, 115),
      // delay 120 - 110 = 10; runs gemmNs.
      record(rank, EventKind::kKernel, "gemm", 7, 11, 120, 120 + gemmNs),
      // An NCCL kernel stored as a collective: communication. delay 200 - 115 = 85.
      record(rank, EventKind::kAllReduce, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 20, 12, 200,
             600),
      launch(rank, "cudaMemcpyAsync", 13, 300, 310),
      // delay 0 (starts before the call ends); 5 ns < the call's 10: shorter than its launch.
      record(rank, EventKind::kMemcpy, "Memcpy HtoD (Pageable -> Device)", 7, 13, 305, 310, 4096),
      // cudaMemcpy is not one of HTA's launch calls: counted, but not in the launch statistics.
      launch(rank, "cudaMemcpy", 14, 400, 410),
      record(rank, EventKind::kMemcpy, "Memcpy DtoH (Device -> Pageable)", 7, 14, 420, 440, 1024),
      // No correlation id: counts, not in the launch statistics.
      record(rank, EventKind::kKernel, "gemm", 7, 0, 700, 700 + gemmNs),
      // A GPU annotation on a stream does not count.
      record(rank, EventKind::kOther, "## forward ##", 7, 0, 0, 900),
      launch(rank, "cudaLaunchKernel", 15, 800, 810),
      // Name says Sync: HTA's "other". delay 850 - 810 = 40; 2 ns: shorter than its launch.
      record(rank, EventKind::kKernel, "SyncBatchNormElementwise", 7, 15, 850, 852),
  };
}

TEST(GpuKernelAnalysis, CountsLaunchedRecordsAndJoinsHtaLaunches) {
  GpuKernelAnalyzer a(/*launchCut=*/true);
  for (const auto& e : rankEvents(0, 100)) a.add(e);
  const auto k = a.finish();
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(k->records, 6);  // all but the one launched before the profile and the annotation
  EXPECT_EQ(k->launchedBeforeProfile, 1);
  const KernelBreakdown& b = k->breakdown;
  EXPECT_EQ(b.ns(KernelType::kComputation), 200);  // two gemms of 100
  EXPECT_EQ(b.ns(KernelType::kCommunication), 400);
  EXPECT_EQ(b.ns(KernelType::kMemory), 5 + 20);
  EXPECT_EQ(b.ns(KernelType::kOther), 2);
  ASSERT_EQ(b.kernels.size(), 5u);
  EXPECT_EQ(b.kernels[0].name, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  EXPECT_EQ(b.kernels[1].name, "gemm");
  EXPECT_EQ(b.kernels[1].count, 2);

  // Delays of the four HTA launches: 10, 85, 0, 40 -> sorted 0, 10, 40, 85.
  ASSERT_TRUE(k->launches.has_value());
  EXPECT_EQ(k->launches->launches, 4);
  EXPECT_EQ(k->launches->delayP50Ns, 10);  // 2nd of 4
  EXPECT_EQ(k->launches->delayP95Ns, 85);  // ceil(3.8) = 4th
  EXPECT_EQ(k->launches->shorterThanLaunch, 2);

  ASSERT_EQ(k->copies.size(), 2u);
  EXPECT_EQ(k->copies[0].kind, "DtoH");
  EXPECT_EQ(k->copies[0].bytes, 1024);
  EXPECT_EQ(k->copies[1].kind, "HtoD");
  EXPECT_EQ(k->copies[1].ns, 5);
}

TEST(GpuKernelAnalysis, WithoutTheLaunchCutEveryRecordCounts) {
  GpuKernelAnalyzer a(/*launchCut=*/false);
  for (const auto& e : rankEvents(0, 100)) a.add(e);
  const auto k = a.finish();
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(k->records, 7);
  EXPECT_EQ(k->launchedBeforeProfile, 0);
  EXPECT_EQ(k->breakdown.ns(KernelType::kComputation), 250);  // 50 + 100 + 100
}

// HTA cuts its trace when it loads it (include_last_profiler_step=False):
// its kernel breakdown and launch statistics leave out the work launched in
// the last ProfilerStep, as its temporal breakdown does. Steps read from
// the events: ProfilerStep#1 at 100, #2 at 500.
std::vector<trace_model::Event> twoStepEvents() {
  trace_model::Event step1;
  step1.lane = trace_model::hostThreadLane(0);
  step1.kind = EventKind::kOther;
  step1.name = "ProfilerStep#1";
  step1.startNs = 100;
  step1.endNs = 500;
  trace_model::Event step2 = step1;
  step2.name = "ProfilerStep#2";
  step2.startNs = 500;
  step2.endNs = 900;
  return {
      step1,
      launch(0, "cudaLaunchKernel", 11, 110, 120),
      // Launched in step 1: counted. Starts after step 2 began (GPU lag).
      record(0, EventKind::kKernel, "gemm", 7, 11, 130, 530),
      launch(0, "cudaMemcpyAsync", 12, 400, 410),
      step2,
      launch(0, "cudaLaunchKernel", 13, 510, 520),
      // Launched in step 1, started in step 2: counted.
      record(0, EventKind::kMemcpy, "Memcpy HtoD (Pageable -> Device)", 7, 12, 530, 540, 64),
      // Launched in step 2: the last.
      record(0, EventKind::kKernel, "gemm", 7, 13, 600, 700),
      launch(0, "cudaMemsetAsync", 14, 610, 620),
      record(0, EventKind::kMemset, "Memset (Device)", 7, 14, 700, 701, 8),
      // No correlation id: judged by its own start, in step 2.
      record(0, EventKind::kKernel, "elementwise", 7, 0, 800, 810),
  };
}

TEST(GpuKernelAnalysis, WithoutTheLastStepTheTablesLeaveItsWorkOut) {
  GpuKernelAnalyzer all(/*launchCut=*/true, /*includeLastStep=*/true);
  GpuKernelAnalyzer cut(/*launchCut=*/true, /*includeLastStep=*/false);
  for (const auto& e : twoStepEvents()) all.add(e), cut.add(e);
  const auto a = all.finish();
  const auto k = cut.finish();
  ASSERT_TRUE(a.has_value() && k.has_value());
  EXPECT_EQ(a->records, 5);
  EXPECT_EQ(a->afterLastStep, 0);
  EXPECT_TRUE(a->includeLastStep);
  EXPECT_EQ(a->breakdown.ns(KernelType::kComputation), 400 + 100 + 10);

  EXPECT_EQ(k->records, 2);  // the gemm and the copy launched in step 1
  EXPECT_EQ(k->afterLastStep, 3);
  EXPECT_EQ(k->launchedBeforeProfile, 0);
  EXPECT_FALSE(k->includeLastStep);
  EXPECT_TRUE(k->launchCut);
  EXPECT_EQ(k->breakdown.ns(KernelType::kComputation), 400);
  EXPECT_EQ(k->breakdown.ns(KernelType::kMemory), 10);
  ASSERT_EQ(k->breakdown.kernels.size(), 2u);
  EXPECT_EQ(k->breakdown.kernels[0].name, "gemm");
  EXPECT_EQ(k->breakdown.kernels[0].count, 1);
  // Launches: the gemm (delay 130 - 120 = 10) and the copy (530 - 410 = 120).
  ASSERT_TRUE(k->launches.has_value());
  EXPECT_EQ(k->launches->launches, 2);
  EXPECT_EQ(k->launches->delayMaxNs, 120);
  ASSERT_EQ(k->copies.size(), 1u);
  EXPECT_EQ(k->copies[0].kind, "HtoD");

  // Steps given ahead cut the same records as they come.
  GpuKernelAnalyzer ahead(true, false,
                          std::vector<trace_model::StepWindow>{{1, 100, 500}, {2, 500, 900}});
  for (const auto& e : twoStepEvents()) ahead.add(e);
  const auto h = ahead.finish();
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->records, 2);
  EXPECT_EQ(h->afterLastStep, 3);
  EXPECT_EQ(h->breakdown.ns(KernelType::kComputation), 400);

  // Without the launch cut (fewer than two steps) nothing is cut.
  GpuKernelAnalyzer noCut(/*launchCut=*/false, /*includeLastStep=*/false);
  for (const auto& e : twoStepEvents()) noCut.add(e);
  EXPECT_EQ(noCut.finish()->records, 5);
}

TEST(GpuKernelAnalysis, NoGpuRecordsIsNothing) {
  GpuKernelAnalyzer a(true);
  a.add(launch(0, "cudaLaunchKernel", 1, 0, 10));
  EXPECT_FALSE(a.finish().has_value());
}

// Two ranks, two steps each (the launch cut applies); rank 1's gemms run
// 300 ns against rank 0's 100.
class GpuKernelReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<trace_model::Event> events;
    std::vector<trace_model::StepRecord> steps;
    std::vector<storage::RankInfo> ranks;
    for (int32_t rank = 0; rank < 2; ++rank) {
      ranks.push_back(testing::rankInfo(rank, rank, 0, 0));
      ranks.back().device = "cuda:" + std::to_string(rank);
      for (const auto& e : rankEvents(rank, rank == 0 ? 100 : 300)) events.push_back(e);
      steps.push_back(testing::stepRecord(rank, 0, 0, 500));
      steps.push_back(testing::stepRecord(rank, 1, 500, 1000));
    }
    std::sort(events.begin(), events.end(), [](const auto& a, const auto& b) {
      return std::tie(a.rank, a.startNs) < std::tie(b.rank, b.startNs);
    });
    const int64_t id = trace_.run(
        {.name = "gpu", .worldSize = 2, .ranks = ranks, .events = events, .steps = steps});
    auto reader = storage::TraceReader::open(trace_.path());
    ASSERT_TRUE(reader.isOk());
    auto r = analyzeRun(**reader, id);
    ASSERT_TRUE(r.isOk()) << r.status().message();
    report_ = *r;
  }

  testing::TraceBuilder trace_;
  RunReport report_;
};

TEST_F(GpuKernelReportTest, SpreadShowsTheStragglingKernel) {
  ASSERT_EQ(report_.ranks.size(), 2u);
  ASSERT_TRUE(report_.ranks[1].kernels.has_value());
  EXPECT_EQ(report_.ranks[1].kernels->breakdown.ns(KernelType::kComputation), 600);
  const KernelSpread& gemm = report_.kernelSpreads.at("gemm");
  EXPECT_EQ(gemm.ranks, 2);
  EXPECT_EQ(gemm.minTotalNs, 200);
  EXPECT_EQ(gemm.maxTotalNs, 600);
  EXPECT_EQ(gemm.maxRank, 1);
  EXPECT_DOUBLE_EQ(gemm.maxOverMean(), 1.5);  // 600 / 400
}

// The lines of `text` from the one starting with `heading` to the next blank line.
std::vector<std::string> sectionLines(const std::string& text, const std::string& heading) {
  std::vector<std::string> out;
  size_t at = text.find("\n" + heading);
  if (at == std::string::npos) return out;
  at += 1;
  while (at < text.size()) {
    const size_t end = text.find('\n', at);
    const std::string line =
        text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (line.empty()) break;
    out.push_back(line);
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return out;
}

// A table line's cells (split on runs of two or more spaces).
std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < line.size()) {
    const size_t gap = line.find("  ", at);
    const std::string cell =
        line.substr(at, gap == std::string::npos ? std::string::npos : gap - at);
    if (!cell.empty()) out.push_back(cell);
    if (gap == std::string::npos) break;
    at = line.find_first_not_of(' ', gap);
  }
  return out;
}

TEST_F(GpuKernelReportTest, TextHasTheFourSectionsWithHandWorkedFigures) {
  const std::string text = reportToText(report_, false, 1);
  // Rank 0's kernel time: 200 + 400 + 25 + 2 = 627 ns: computation 200/627 = 31.9%,
  // communication 400/627 = 63.8%, memory 25/627 = 4.0%, other 2/627 = 0.3%.
  const auto types = sectionLines(text, "GPU kernel time by type");
  ASSERT_EQ(types.size(), 5u) << text;  // heading, header, rule, two ranks
  EXPECT_NE(types[0].find("of the work launched in the trace, last ProfilerStep included"),
            std::string::npos)
      << types[0];
  // 6 counted, 1 left out (launched before the profile).
  EXPECT_EQ(cells(types[3]),
            (std::vector<std::string>{"0", "6", "1", "0.001", "31.9%", "63.8%", "4.0%", "0.3%"}));
  // --top-kernels 1: each rank's first kernel: rank 0 the all-reduce (400 > 200),
  // rank 1 gemm (600 > 400), with gemm's spread 200..600 ns, max/mean 1.50.
  const auto top = sectionLines(text, "Top 1 kernels per rank");
  ASSERT_EQ(top.size(), 5u) << text;
  EXPECT_EQ(cells(top[1]).back(), "kernel");
  EXPECT_EQ(cells(top[3]).front(), "0");
  EXPECT_EQ(cells(top[3]).back(), "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  EXPECT_EQ(cells(top[4]),
            (std::vector<std::string>{"1", "computation", "2", "0.001", "0.3", "0.3", "58.4%", "2",
                                      "0.000", "0.001", "1.50", "gemm"}));
  // Delays 0, 10, 40, 85 ns: p50 0.0 us, p95 0.1 us; 2 of 4 shorter than their call.
  const auto launches = sectionLines(text, "CUDA launches");
  ASSERT_EQ(launches.size(), 5u) << text;
  EXPECT_EQ(cells(launches[3]),
            (std::vector<std::string>{"0", "4", "0.0", "0.1", "0.1", "2 (50.0%)"}));
  // HtoD: 4096 B in 5 ns = 819.20 GB/s.
  const auto copies = sectionLines(text, "Memory copies by kind");
  ASSERT_EQ(copies.size(), 7u) << text;
  EXPECT_EQ(cells(copies[4]),
            (std::vector<std::string>{"0", "HtoD", "1", "4.00 KiB", "0.000", "819.20"}));
}

TEST_F(GpuKernelReportTest, MarkdownHasTheSameSections) {
  const std::string md = reportToText(report_, true, 10);
  EXPECT_NE(md.find("### GPU kernel time by type"), std::string::npos) << md;
  EXPECT_NE(md.find("### Top 10 kernels per rank"), std::string::npos);
  EXPECT_NE(md.find("### CUDA launches"), std::string::npos);
  EXPECT_NE(md.find("| rank | kind | count |"), std::string::npos) << md;
  // A run without GPU records has none of them.
  RunReport plain = report_;
  for (auto& r : plain.ranks) r.kernels.reset();
  EXPECT_EQ(reportToText(plain, false).find("GPU kernel time"), std::string::npos);
}

TEST_F(GpuKernelReportTest, JsonHasEveryKey) {
  const auto j = runToJson(report_, 2);
  const auto& k = j["ranks"][1]["gpu_kernels"];
  ASSERT_TRUE(k.is_object()) << j.dump(2);
  EXPECT_EQ(k["records"], 6);
  EXPECT_EQ(k["launched_before_profile"], 1);
  EXPECT_EQ(k["after_last_step"], 0);
  EXPECT_EQ(k["launch_cut"], true);
  EXPECT_EQ(k["include_last_step"], true);
  EXPECT_DOUBLE_EQ(k["by_type"]["computation"]["ms"].get<double>(), 600 / 1e6);
  EXPECT_EQ(k["by_type"]["other"]["records"], 1);
  ASSERT_EQ(k["top"].size(), 2u);
  EXPECT_EQ(k["top"][0]["name"], "gemm");
  EXPECT_EQ(k["top"][0]["type"], "computation");
  EXPECT_EQ(k["top"][0]["rank_max"], 1);
  EXPECT_DOUBLE_EQ(k["top"][0]["max_over_mean"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(k["top"][0]["p95_ms"].get<double>(), 300 / 1e6);
  EXPECT_EQ(k["launches"]["launches"], 4);
  EXPECT_DOUBLE_EQ(k["launches"]["delay_p95_ms"].get<double>(), 85 / 1e6);
  EXPECT_EQ(k["launches"]["shorter_than_launch"], 2);
  ASSERT_EQ(k["memory_copies"].size(), 2u);
  EXPECT_EQ(k["memory_copies"][1]["kind"], "HtoD");
  EXPECT_EQ(k["memory_copies"][1]["bytes"], 4096);
}

}  // namespace
}  // namespace bubblescope::analysis
