// analyzeRun on hand-built traces whose answers are known exactly.
#include "storage/analysis/run_analyzer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "storage/analysis/report_json.h"
#include "tests/analysis/trace_builder.h"

namespace bubblescope::analysis {
namespace {

using testing::rankInfo;
using testing::span;
using testing::stepRecord;
using testing::TraceBuilder;
using trace_model::EventKind;
using trace_model::ParallelDim;

constexpr int kDp = static_cast<int>(ParallelDim::kDp);
constexpr int kTp = static_cast<int>(ParallelDim::kTp);
constexpr int kPp = static_cast<int>(ParallelDim::kPp);

RunReport analyze(const TraceBuilder& trace, int64_t runId) {
  auto reader = storage::TraceReader::open(trace.path());
  EXPECT_TRUE(reader.isOk()) << reader.status().message();
  auto report = analyzeRun(**reader, runId);
  EXPECT_TRUE(report.isOk()) << report.status().message();
  return report.isOk() ? *report : RunReport{};
}

// One rank, one step [0, 100): compute [0,40) ∪ [30,50) = 50; comm dp
// [40,70) and tp [80,90) = 40, of which 10 under compute; wait [90,95)
// exposed 5; busy |[0,70) ∪ [80,90)| = 80, so idle 15.
TEST(RunAnalyzerTest, OverlappingAndDisjointSpans) {
  TraceBuilder trace;
  const int64_t run = trace.run({
      .ranks = {rankInfo(0, 0, 0, 0)},
      .events = {span(0, EventKind::kForward, 0, 40, 0), span(0, EventKind::kBackward, 30, 50, 0),
                 span(0, EventKind::kAllReduce, 40, 70, 0, ParallelDim::kDp, 1000),
                 span(0, EventKind::kAllGather, 80, 90, 0, ParallelDim::kTp, 200),
                 span(0, EventKind::kWait, 90, 95, 0), span(0, EventKind::kDataLoad, 95, 99, 0)},
      .steps = {stepRecord(0, 0, 0, 100, 2.5, 64)},
  });
  const RunReport r = analyze(trace, run);
  ASSERT_EQ(r.ranks.size(), 1u);
  const RankReport& k = r.ranks[0];
  EXPECT_EQ(k.steps, 1);
  EXPECT_EQ(k.stepNs, 100);
  EXPECT_EQ(k.computeNs, 50);
  EXPECT_EQ(k.commNs, 40);
  EXPECT_EQ(k.overlapNs, 10);
  EXPECT_EQ(k.exposedCommNs, 30);
  EXPECT_EQ(k.waitNs, 5);
  EXPECT_EQ(k.idleNs, 15);
  EXPECT_DOUBLE_EQ(*k.utilization(), 0.5);
  EXPECT_DOUBLE_EQ(*k.commRatio(), 0.4);
  EXPECT_DOUBLE_EQ(*k.overlap(), 0.25);
  EXPECT_DOUBLE_EQ(*k.idleRatio(), 0.15);
  EXPECT_DOUBLE_EQ(*k.bubbleFraction(), 0.2);
  EXPECT_EQ(k.commNsByDim[kDp], 30);
  EXPECT_EQ(k.commNsByDim[kTp], 10);
  EXPECT_EQ(k.commBytesByDim[kDp], 1000);
  EXPECT_EQ(k.commBytesByDim[kTp], 200);
  EXPECT_EQ(k.commVolumeByDim[kDp], 2000);  // an all-reduce counts twice
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].timeNs, 100);
  EXPECT_EQ(r.steps[0].loss, 2.5);
  EXPECT_DOUBLE_EQ(*r.tokensPerS, 64 / 100e-9);
  EXPECT_TRUE(r.notes.empty());
}

// One rank: a warm-up step of 200 ns with 150 ns idle, then three steps of
// 100 ns with 10 ns idle and a hiccup of 300 ns with 210. Its steady steps
// (after the first, not hiccups) alone make the sums and the bubble; the
// step table still has all five.
TEST(RunAnalyzerTest, SteadyStepsAloneMakeTheSums) {
  TraceBuilder trace;
  const int64_t run = trace.run({
      .ranks = {rankInfo(0, 0, 0, 0)},
      .events = {span(0, EventKind::kForward, 0, 50, 0), span(0, EventKind::kForward, 200, 290, 1),
                 span(0, EventKind::kForward, 300, 390, 2), span(0, EventKind::kForward, 400, 490, 3),
                 span(0, EventKind::kForward, 500, 590, 4)},
      .steps = {stepRecord(0, 0, 0, 200, 2.5, 64), stepRecord(0, 1, 200, 300, 2.0, 64),
                stepRecord(0, 2, 300, 400, 1.5, 64), stepRecord(0, 3, 400, 500, 1.4, 64),
                stepRecord(0, 4, 500, 800, 1.3, 64)},
  });
  auto reader = storage::TraceReader::open(trace.path());
  ASSERT_TRUE(reader.isOk()) << reader.status().message();
  const Result<RunReport> every = analyzeRun(**reader, run);
  ASSERT_TRUE(every.isOk()) << every.status().message();
  EXPECT_EQ(every->ranks[0].idleNs, 150 + 3 * 10 + 210);
  EXPECT_DOUBLE_EQ(*every->stages[0].bubbleFraction, 390.0 / 800.0);
  AnalysisOptions steady;
  steady.steadyStepsOnly = true;
  const Result<RunReport> counted = analyzeRun(**reader, run, steady);
  ASSERT_TRUE(counted.isOk()) << counted.status().message();
  const RankReport& k = counted->ranks[0];
  EXPECT_EQ(k.steps, 3);
  EXPECT_EQ(k.stepNs, 300);
  EXPECT_EQ(k.computeNs, 270);
  EXPECT_EQ(k.idleNs, 30);
  EXPECT_DOUBLE_EQ(*counted->stages[0].bubbleFraction, 0.1);
  EXPECT_EQ(counted->steps.size(), 5u);
}

// GPipe, p = 2, m = 2, t_f = t_b = 10 ns, two steps of 60 ns. Stage 0 waits
// [20,40) for stage 1's backward; stage 1 has no events in [0,10) and
// [50,60). Both bubbles are exactly 20/60 = (p−1)/(m+p−1).
TEST(RunAnalyzerTest, PipelineWithExactIdleGaps) {
  std::vector<trace_model::Event> events;
  std::vector<trace_model::StepRecord> steps;
  for (int32_t step = 0; step < 2; ++step) {
    const int64_t t = 60 * step;
    for (int64_t s : {0, 10, 40, 50})
      events.push_back(span(0, EventKind::kForward, t + s, t + s + 10, step));
    events.push_back(span(0, EventKind::kSend, t + 9, t + 10, step, ParallelDim::kPp, 64, 1));
    events.push_back(span(0, EventKind::kWait, t + 20, t + 40, step));
    for (int64_t s : {10, 20, 30, 40})
      events.push_back(span(1, EventKind::kBackward, t + s, t + s + 10, step));
    events.push_back(span(1, EventKind::kRecv, t + 10, t + 11, step, ParallelDim::kPp, 64, 0));
    steps.push_back(stepRecord(0, step, t, t + 60, NAN, 1000));
    steps.push_back(stepRecord(1, step, t, t + 60, 4.0 - step, 1000));
  }
  TraceBuilder trace;
  const int64_t run = trace.run({
      .layoutJson = R"({"dp": 1, "tp": 1, "pp": 2, "schedule": "gpipe", "micro_batches": 2})",
      .worldSize = 2,
      .ranks = {rankInfo(0, 0, 0, 0), rankInfo(1, 0, 0, 1)},
      .events = events,
      .steps = steps,
  });
  const RunReport r = analyze(trace, run);
  ASSERT_EQ(r.ranks.size(), 2u);
  EXPECT_EQ(r.ranks[0].waitNs, 40);
  EXPECT_EQ(r.ranks[0].idleNs, 0);
  EXPECT_EQ(r.ranks[1].waitNs, 0);
  EXPECT_EQ(r.ranks[1].idleNs, 40);
  EXPECT_EQ(r.ranks[0].overlapNs, 2);  // the sends sit inside a forward
  EXPECT_EQ(r.ranks[0].commBytesByDim[kPp], 128);
  ASSERT_EQ(r.stages.size(), 2u);
  for (const StageReport& s : r.stages) {
    EXPECT_DOUBLE_EQ(*s.bubbleFraction, 1.0 / 3.0) << "stage " << s.stage;
    EXPECT_DOUBLE_EQ(*s.bubbleFormula, 1.0 / 3.0);
    EXPECT_EQ(s.ranks, std::vector<int32_t>{s.stage});
  }
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_EQ(r.steps[0].loss, 4.0);  // from the rank that computed it
  EXPECT_EQ(r.steps[1].loss, 3.0);
  EXPECT_EQ(r.steps[1].tokens, 1000);
  EXPECT_DOUBLE_EQ(*r.stepTimeMeanNs, 60);
  EXPECT_DOUBLE_EQ(*r.stepTimeStdNs, 0);
  EXPECT_DOUBLE_EQ(*r.tokensPerS, 2000 / 120e-9);
  EXPECT_TRUE(r.stragglers.empty());
}

// dp = 4, five steps of 100 ns: compute 60 then an all-reduce until 90.
// Rank 2 computes 20 ns longer; rank 3 computes as long but starts 15 ns
// late, so only its arrival at the all-reduce is late.
TEST(RunAnalyzerTest, FindsStragglersAndHowLate) {
  std::vector<trace_model::Event> events;
  std::vector<trace_model::StepRecord> steps;
  for (int32_t step = 0; step < 5; ++step) {
    const int64_t t = 100 * step;
    for (int32_t rank = 0; rank < 4; ++rank) {
      const int64_t begin = rank == 3 ? 15 : 0;
      const int64_t computeEnd = rank == 2 ? 80 : begin + 60;
      events.push_back(span(rank, EventKind::kForward, t + begin, t + computeEnd, step));
      events.push_back(
          span(rank, EventKind::kAllReduce, t + computeEnd, t + 90, step, ParallelDim::kDp, 400));
      steps.push_back(stepRecord(rank, step, t, t + 100));
    }
  }
  std::vector<storage::RankInfo> ranks;
  for (int32_t rank = 0; rank < 4; ++rank) {
    ranks.push_back(rankInfo(rank, rank, 0, 0));
    ranks.back().parameters = 100;  // Ψ of the rank
  }
  TraceBuilder trace;
  const int64_t run = trace.run({
      .layoutJson = R"({"dp": 4, "zero_stage": 0})",
      .worldSize = 4,
      .ranks = ranks,
      .events = events,
      .steps = steps,
  });
  const RunReport r = analyze(trace, run);
  ASSERT_EQ(r.stragglers.size(), 2u);
  EXPECT_EQ(r.stragglers[0].rank, 2);
  EXPECT_EQ(r.stragglers[0].reason, "compute");
  EXPECT_DOUBLE_EQ(r.stragglers[0].lateNsMean, 20);
  EXPECT_EQ(r.stragglers[0].lateSteps, 5);
  EXPECT_EQ(r.stragglers[0].steps, 5);
  EXPECT_EQ(r.stragglers[1].rank, 3);
  EXPECT_EQ(r.stragglers[1].reason, "collective arrival");
  EXPECT_DOUBLE_EQ(r.stragglers[1].lateNsMean, 15);
  EXPECT_EQ(r.slowestRank, 2);
  EXPECT_EQ(r.slowestStage, 0);
  // Data-parallel volume: 2Ψ·4 bytes = 800 per step and the loss's all-reduce
  // (8 bytes, counted twice); measured 2·400 (this trace has no loss event).
  ASSERT_EQ(r.commVolume.size(), 1u);
  EXPECT_EQ(r.commVolume[0].dim, "dp+zero");
  EXPECT_DOUBLE_EQ(r.commVolume[0].measuredBytesPerStep, 800);
  EXPECT_DOUBLE_EQ(*r.commVolume[0].formulaBytesPerStep, 800 + 16);
}

TEST(RunAnalyzerTest, RunWithoutCommunication) {
  TraceBuilder trace;
  const int64_t run = trace.run({
      .ranks = {rankInfo(0, 0, 0, 0)},
      .events = {span(0, EventKind::kForward, 0, 30, 0), span(0, EventKind::kBackward, 30, 80, 0)},
      .steps = {stepRecord(0, 0, 0, 100)},
  });
  const RunReport r = analyze(trace, run);
  ASSERT_EQ(r.ranks.size(), 1u);
  EXPECT_EQ(r.ranks[0].commNs, 0);
  EXPECT_FALSE(r.ranks[0].overlap()) << "overlap of no communication is unknown";
  EXPECT_DOUBLE_EQ(*r.ranks[0].commRatio(), 0.0);
  EXPECT_DOUBLE_EQ(*r.ranks[0].idleRatio(), 0.2);
  EXPECT_TRUE(r.commVolume.empty());
  EXPECT_TRUE(r.stragglers.empty());
  EXPECT_FALSE(r.tokensPerS);
}

TEST(RunAnalyzerTest, EmptyRun) {
  TraceBuilder trace;
  const int64_t run = trace.run({.name = "empty"});
  const RunReport r = analyze(trace, run);
  EXPECT_EQ(r.run.info.name, "empty");
  EXPECT_TRUE(r.ranks.empty());
  EXPECT_TRUE(r.steps.empty());
  EXPECT_TRUE(r.stages.empty());
  EXPECT_FALSE(r.stepTimeMeanNs);
  EXPECT_FALSE(r.tokensPerS);
  EXPECT_FALSE(r.slowestRank);
  EXPECT_EQ(r.notes, std::vector<std::string>{"the run has no events"});
}

TEST(RunAnalyzerTest, RunStillBeingWrittenCoversWhatIsCommitted) {
  TraceBuilder trace;
  const int64_t run = trace.run({
      .ranks = {rankInfo(0, 0, 0, 0)},
      .events = {span(0, EventKind::kForward, 0, 50, 0)},
      .steps = {stepRecord(0, 0, 0, 100)},
      .end = storage::RunStatus::kRunning,
  });
  const RunReport r = analyze(trace, run);
  EXPECT_EQ(r.run.health, storage::RunHealth::kRunning);
  ASSERT_EQ(r.ranks.size(), 1u);
  EXPECT_DOUBLE_EQ(*r.ranks[0].utilization(), 0.5);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0],
            "the run is still being written: this covers the 1 events committed so far");
}

TEST(RunAnalyzerTest, FailedRunKeepsItsMetricsAndSaysWhy) {
  TraceBuilder trace;
  const int64_t run = trace.run({
      .ranks = {rankInfo(0, 0, 0, 0)},
      .events = {span(0, EventKind::kForward, 0, 25, 0)},
      .steps = {stepRecord(0, 0, 0, 100)},
      .end = storage::RunStatus::kFailed,
      .error = "rank 1 ran out of memory",
  });
  const RunReport r = analyze(trace, run);
  EXPECT_EQ(r.run.health, storage::RunHealth::kFailed);
  EXPECT_DOUBLE_EQ(*r.ranks[0].utilization(), 0.25);
  EXPECT_EQ(r.notes, std::vector<std::string>{"the run failed: rank 1 ran out of memory"});
}

// Without a steps table, a rank's steps span its step-tagged events.
TEST(RunAnalyzerTest, StepsFromEventSpansWhenThereIsNoStepsTable) {
  TraceBuilder trace;
  const int64_t run = trace.run({
      .ranks = {rankInfo(0, 0, 0, 0)},
      .events = {span(0, EventKind::kForward, 10, 20, 0), span(0, EventKind::kBackward, 30, 40, 0),
                 span(0, EventKind::kForward, 40, 60, 1)},
  });
  const RunReport r = analyze(trace, run);
  ASSERT_EQ(r.ranks.size(), 1u);
  EXPECT_EQ(r.ranks[0].steps, 2);
  EXPECT_EQ(r.ranks[0].stepNs, 30 + 20);
  EXPECT_EQ(r.ranks[0].idleNs, 10);
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_EQ(r.steps[0].timeNs, 30);
  EXPECT_FALSE(r.steps[0].loss);
  ASSERT_EQ(r.notes.size(), 1u);
}

// A rank that marks no step (an Nsight import without step ranges) is
// analysed over the run's range [10, 110): compute 20, idle 80 of 100. That
// idle is no pipeline bubble: the bubble is unknown, the idle stays, and the
// note and the JSON say why.
TEST(RunAnalyzerTest, ARankWithoutStepsHasNoBubble) {
  TraceBuilder trace;
  const int64_t run = trace.run({
      .ranks = {rankInfo(0, 0, 0, 0)},
      .events = {span(0, EventKind::kForward, 10, 30), span(0, EventKind::kOther, 100, 110)},
  });
  const RunReport r = analyze(trace, run);
  ASSERT_EQ(r.ranks.size(), 1u);
  const RankReport& k = r.ranks[0];
  EXPECT_TRUE(k.wholeRun);
  EXPECT_EQ(k.stepNs, 100);
  EXPECT_DOUBLE_EQ(k.idleRatio().value_or(NAN), 0.8);
  EXPECT_FALSE(k.bubbleFraction().has_value());
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("no pipeline bubble"), std::string::npos) << r.notes[0];
  const nlohmann::ordered_json j = runToJson(r, 10);
  EXPECT_TRUE(j["ranks"][0]["bubble_fraction"].is_null());
  EXPECT_EQ(j["ranks"][0]["whole_run"], true);
  EXPECT_DOUBLE_EQ(j["ranks"][0]["idle_ratio"].get<double>(), 0.8);
}

// dp 2, ZeRO-1, Ψ = 1000: parameters 4Ψ, gradients 4Ψ (+ the reduced
// pieces, at most the shard Ψ/2), optimizer 8Ψ/2.
TEST(RunAnalyzerTest, MemoryAgainstZeroFormulas) {
  auto r0 = rankInfo(0, 0, 0, 0), r1 = rankInfo(1, 1, 0, 0);
  r0.parameters = r1.parameters = 1000;
  TraceBuilder trace;
  const int64_t run = trace.run({
      .layoutJson = R"({"dp": 2, "zero_stage": 1})",
      .worldSize = 2,
      .ranks = {r0, r1},
      .samples = {{0, "mem.parameters", 1, 3000},
                  {0, "mem.parameters", 2, 4000},
                  {0, "mem.optimizer", 2, 4000},
                  {1, "mem.activations", 3, 512}},
  });
  const RunReport r = analyze(trace, run);
  ASSERT_EQ(r.ranks.size(), 2u);
  const auto& m0 = r.ranks[0].memory;
  ASSERT_EQ(m0.size(), 4u);
  EXPECT_EQ(m0[0].category, "parameters");
  EXPECT_EQ(m0[0].measuredBytes, 4000);
  EXPECT_EQ(m0[0].formulaBytes, 4000);
  EXPECT_EQ(m0[1].category, "gradients");
  EXPECT_FALSE(m0[1].measuredBytes);
  EXPECT_EQ(m0[1].formulaBytes, 4000);
  EXPECT_EQ(m0[1].formulaTransientBytes, 2000);
  EXPECT_EQ(m0[0].formulaTransientBytes, 0);
  EXPECT_EQ(m0[2].measuredBytes, 4000);
  EXPECT_EQ(m0[2].formulaBytes, 4000);
  EXPECT_EQ(m0[3].category, "activations");
  EXPECT_FALSE(m0[3].formulaBytes);
  EXPECT_EQ(r.ranks[1].memory[3].measuredBytes, 512);
}

// dp 2 x tp 2, ZeRO 1: each rank's stored Ψ_rank (its tp slices plus the
// replicated layer norms, embeddings and head) replaces the even split Ψ/tp.
TEST(RunAnalyzerTest, MemoryAndDpVolumeUseEachRanksStoredParameters) {
  auto r0 = rankInfo(0, 0, 0, 0), r1 = rankInfo(1, 0, 1, 0);
  r0.parameters = 700;  // even split would be 500
  TraceBuilder trace;
  const int64_t run = trace.run({
      .layoutJson = R"({"dp": 2, "tp": 2, "zero_stage": 1, "model": {"preset": "tiny",
                       "layers": 1, "hidden": 4, "heads": 2, "vocab_size": 7, "seq_len": 3}})",
      .worldSize = 4,
      .ranks = {r0, r1},
      .events = {span(0, EventKind::kForward, 0, 5, 0), span(1, EventKind::kForward, 0, 5, 0)},
      .steps = {stepRecord(0, 0, 0, 5), stepRecord(1, 0, 0, 5)},
      .samples = {{0, "mem.parameters", 1, 2800}, {1, "mem.parameters", 1, 2000}},
  });
  const RunReport r = analyze(trace, run);
  ASSERT_EQ(r.ranks.size(), 2u);
  EXPECT_EQ(r.ranks[0].memory[0].formulaBytes, 4 * 700);
  EXPECT_EQ(r.ranks[0].memory[2].formulaBytes, 8 * 700 / 2);
  // Ψ of that model: wte 7·4 + wpe 3·4 + one block 244 + head 2·4 + 4·7 = 320;
  // the even split over tp 2 is 160.
  EXPECT_EQ(r.ranks[1].memory[0].formulaBytes, 4 * 160) << "no stored count: the even split";
  const auto dp = std::find_if(r.commVolume.begin(), r.commVolume.end(),
                               [](const CommVolume& v) { return v.dim == "dp+zero"; });
  ASSERT_NE(dp, r.commVolume.end());
  ASSERT_TRUE(dp->formulaBytesPerStep);
  // 2Ψ per rank, plus the loss and the clipping norm (8 bytes each, counted twice).
  EXPECT_DOUBLE_EQ(*dp->formulaBytesPerStep, (2 * 700 * 4 + 2 * 160 * 4) / 2.0 + 2 * 16);
}

TEST(RunAnalyzerTest, MissingRunIsOneClearError) {
  TraceBuilder trace;
  trace.run({});
  auto reader = storage::TraceReader::open(trace.path());
  ASSERT_TRUE(reader.isOk());
  auto report = analyzeRun(**reader, 9);
  ASSERT_FALSE(report.isOk());
  EXPECT_EQ(report.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(report.status().message(), "run 9 is not in " + trace.path() + " (runs: 1)");
}

TEST(RunAnalyzerTest, OversubscribedHostsAreNoted) {
  auto rank = rankInfo(0, 0, 0, 0);
  rank.coresOnHost = 2;
  rank.ranksOnHost = 8;
  TraceBuilder trace;
  const int64_t run = trace.run({.ranks = {rank},
                                 .events = {span(0, EventKind::kForward, 0, 5, 0)},
                                 .steps = {stepRecord(0, 0, 0, 5)}});
  const RunReport r = analyze(trace, run);
  ASSERT_EQ(r.notes.size(), 2u);
  EXPECT_EQ(r.notes[0],
            "oversubscribed: host h0 ran 8 ranks on 2 cores, so spans stretch unevenly");
  // Its spans carry no thread CPU time, so it cannot be replayed.
  EXPECT_EQ(r.notes[1],
            "no ideal-hardware replay: the run's spans carry no thread CPU time (traced before "
            "schema v5): nothing to replay");
}

// onRankDone reports each rank once, in order, and returning false cancels.
TEST(RunAnalyzerTest, ReportsProgressPerRankAndCancels) {
  TraceBuilder trace;
  const int64_t run = trace.run({
      .ranks = {rankInfo(0, 0, 0, 0), rankInfo(1, 1, 0, 0), rankInfo(2, 2, 0, 0)},
      .events = {span(0, EventKind::kForward, 0, 10, 0), span(1, EventKind::kForward, 0, 10, 0),
                 span(2, EventKind::kForward, 0, 10, 0)},
      .steps = {stepRecord(0, 0, 0, 20, 1.0, 8)},
  });
  auto reader = storage::TraceReader::open(trace.path());
  ASSERT_TRUE(reader.isOk());
  std::vector<std::pair<int32_t, int32_t>> calls;
  AnalysisOptions options;
  options.onRankDone = [&](int32_t done, int32_t total) {
    calls.emplace_back(done, total);
    return true;
  };
  ASSERT_TRUE(analyzeRun(**reader, run, options).isOk());
  EXPECT_EQ(calls, (std::vector<std::pair<int32_t, int32_t>>{{1, 3}, {2, 3}, {3, 3}}));
  options.onRankDone = [](int32_t done, int32_t) { return done < 2; };
  auto cancelled = analyzeRun(**reader, run, options);
  ASSERT_FALSE(cancelled.isOk());
  EXPECT_EQ(cancelled.status().message(), "analysis cancelled");
}

}  // namespace
}  // namespace bubblescope::analysis
