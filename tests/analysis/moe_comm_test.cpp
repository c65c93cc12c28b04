// ep all-to-all time and bytes against the even-routing formula and the
// run's own routing, and the MoE advice, on hand-built reports whose answers
// are worked out here.
#include "storage/analysis/moe_comm.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/layout/moe_samples.h"
#include "storage/analysis/moe_advice.h"

namespace bubblescope::analysis {
namespace {

using layout::MoeSeries;
constexpr auto kEp = static_cast<size_t>(trace_model::ParallelDim::kEp);

void addStep(std::vector<trace_model::Sample>& out, int32_t rank, int64_t t,
             const std::vector<int>& routed, const std::vector<int>& dropped) {
  for (size_t e = 0; e < routed.size(); ++e) {
    const auto expert = static_cast<int32_t>(e);
    out.push_back({rank, layout::moeSampleName({0, MoeSeries::kRouted, expert}), t,
                   static_cast<double>(routed[e])});
    out.push_back({rank, layout::moeSampleName({0, MoeSeries::kDropped, expert}), t,
                   static_cast<double>(dropped[e])});
  }
}

// ep 2 = dp 2, one MoE block (h.0) of E = 4 experts, C = 8 (a row is 32 B),
// T = 4 tokens, k = 1, m = 1, two steps. Rank 0 (ep rank 0: experts 0, 1)
// keeps [2,1,2,2] then [2,2,2,2] rows of its tokens per expert: [4,3,4,4],
// 15. Rank 1 (experts 2, 3) keeps [1,2,0,3] then [3,3,0,0]: [4,5,0,3], 12.
// Rank 0's experts get 4+3 + 4+5 = 16 rows, rank 1's 4+4 + 0+3 = 11.
// Routing bytes: 2·32·sent + 2·32·served + 4·E·m·blocks·steps (counts) + 8
// per step (the gradient norm): rank 0: 960 + 1024 + 32 + 16 = 2032, rank 1:
// 768 + 704 + 32 + 16 = 1520 (2 steps). Even routing: (4·1·4·8 + 4)·4 + 8 =
// 536 B per step.
struct EpRun {
  RunReport report;
  std::vector<trace_model::Sample> samples;

  EpRun() {
    layout::Layout l;
    l.model.numLayers = 1;
    l.model.hidden = 8;
    l.model.seqLen = 4;
    l.model.experts = 4;
    l.model.topK = 1;
    l.dp = 2;
    l.microBatchSize = 1;
    l.microBatches = 1;
    report.layout = l;
    report.run.info.layoutJson = R"({"dp": 2, "ep": 2, "model": {"experts": 4}})";
    for (int32_t rank = 0; rank < 2; ++rank) {
      RankReport r;
      r.info.rank = rank;
      r.info.dp = rank;
      r.steps = 2;
      r.stepNs = 40'000'000;
      r.commNsByDim[kEp] = rank == 0 ? 12'000'000 : 4'000'000;
      r.commBytesByDim[kEp] = rank == 0 ? 2032 : 1600;
      report.ranks.push_back(r);
    }
    addStep(samples, 0, 100, {3, 1, 2, 2}, {1, 0, 0, 0});
    addStep(samples, 0, 200, {2, 2, 2, 2}, {0, 0, 0, 0});
    addStep(samples, 1, 110, {1, 3, 0, 4}, {0, 1, 0, 1});
    addStep(samples, 1, 210, {4, 4, 0, 0}, {1, 1, 0, 0});
  }
};

TEST(MoeLoadTest, RanksAddUpStepByStep) {
  EpRun run;
  const auto loads = moeLoadFromSamples(run.samples);
  ASSERT_EQ(loads.size(), 1u);
  ASSERT_EQ(loads[0].perStep.size(), 2u);
  // Step 0: [4,4,2,6] (max/mean 6/4), step 1: [6,6,2,2] (6/4); its time the latest rank's.
  EXPECT_EQ(loads[0].perStep[0].routedByExpert, (std::vector<int64_t>{4, 4, 2, 6}));
  EXPECT_EQ(loads[0].perStep[1].routedByExpert, (std::vector<int64_t>{6, 6, 2, 2}));
  EXPECT_EQ(loads[0].perStep[0].timeNs, 110);
  EXPECT_DOUBLE_EQ(*loads[0].perStep[0].imbalance, 1.5);
  EXPECT_EQ(loads[0].routed, 32);
  EXPECT_EQ(loads[0].dropped, 5);
}

TEST(MoeCommTest, TracedBytesAgainstEvenAndTheRunsRouting) {
  EpRun run;
  const auto loads = moeLoadFromSamples(run.samples);
  const EpComm comm = epCommOf(run.report, run.samples, loads, 2);
  EXPECT_EQ(comm.ep, 2);
  EXPECT_EQ(epDegreeOf(run.report), 2);  // the layout JSON's "ep"
  EXPECT_DOUBLE_EQ(*comm.dropRate, 5.0 / 32);
  EXPECT_DOUBLE_EQ(comm.offRankShare, 0.5);
  ASSERT_EQ(comm.ranks.size(), 2u);
  const EpRankComm& r0 = comm.ranks[0];
  EXPECT_DOUBLE_EQ(r0.timeNsPerStep, 6'000'000.0);
  EXPECT_DOUBLE_EQ(r0.bytesPerStep, 1016.0);
  EXPECT_DOUBLE_EQ(*r0.shareOfStep, 0.3);
  EXPECT_DOUBLE_EQ(*r0.formulaBytesPerStep, 536.0);
  EXPECT_DOUBLE_EQ(*r0.routingBytesPerStep, 1016.0);
  EXPECT_DOUBLE_EQ(*r0.measuredToRouting(), 1.0);
  const EpRankComm& r1 = comm.ranks[1];
  EXPECT_DOUBLE_EQ(*r1.routingBytesPerStep, 760.0);
  EXPECT_DOUBLE_EQ(*r1.measuredToRouting(), 1600.0 / 1520.0);

  const std::string text = epCommText(comm, false);
  EXPECT_NE(text.find("ep 2"), std::string::npos) << text;
  EXPECT_NE(text.find("6.000"), std::string::npos) << text;  // ms per step
  EXPECT_NE(text.find("30.0%"), std::string::npos) << text;  // share of step
  EXPECT_NE(text.find("1.000"), std::string::npos) << text;  // rank 0 traced / routing
  EXPECT_NE(text.find("1.053"), std::string::npos) << text;  // rank 1: 1600 / 1520
  const auto json = epCommJson(comm);
  EXPECT_EQ(json["ep"], 2);
  EXPECT_DOUBLE_EQ(json["ranks"][1]["routing_bytes_per_step"].get<double>(), 760.0);
  EXPECT_DOUBLE_EQ(json["ranks"][0]["formula_bytes_per_step"].get<double>(), 536.0);
}

TEST(MoeCommTest, NoEpSpansNoRows) {
  EpRun run;
  for (auto& r : run.report.ranks) r.commNsByDim[kEp] = 0, r.commBytesByDim[kEp] = 0;
  EXPECT_TRUE(epCommOf(run.report, run.samples, {}, 2).empty());
  EXPECT_EQ(epCommText(epCommOf(run.report, run.samples, {}, 2), false), "");
}

MoeBlockLoad blockLoad(int32_t block, int64_t routed, int64_t dropped, double imbalanceMean,
                       double imbalanceMax) {
  return {.block = block,
          .experts = 4,
          .steps = 2,
          .imbalanceMean = imbalanceMean,
          .imbalanceMax = imbalanceMax,
          .imbalanceMaxStep = 1,
          .routed = routed,
          .dropped = dropped};
}

TEST(MoeAdviceTest, RulesFireOnTheirThresholdsOnly) {
  // Block 0 balanced and not dropping; block 1 at 2.0x mean with 10% dropped;
  // rank 0's all-to-alls take 30% of its step.
  EpRun run;
  const std::vector<MoeBlockLoad> loads{blockLoad(0, 1000, 10, 1.1, 1.2),
                                        blockLoad(1, 1000, 100, 2.0, 2.1)};
  const EpComm comm = epCommOf(run.report, run.samples, loads, 2);
  const auto advice = moeAdvice(loads, comm, 1.25);
  ASSERT_EQ(advice.size(), 3u);
  EXPECT_NE(advice[0].find("h.1"), std::string::npos) << advice[0];
  EXPECT_NE(advice[0].find("2.00x"), std::string::npos) << advice[0];
  EXPECT_NE(advice[0].find("50.0%"), std::string::npos) << advice[0];  // 1 - 1/2
  // The busiest expert needs 2.1 · k·N/E: 2.1 up to a quarter, 2.25.
  EXPECT_NE(advice[1].find("from 1.25 to at least 2.25"), std::string::npos) << advice[1];
  EXPECT_NE(advice[1].find("10.0%"), std::string::npos) << advice[1];
  EXPECT_NE(advice[2].find("30.0% of the step on rank 0"), std::string::npos) << advice[2];
  // At ep 1 no assignment leaves its rank.
  EXPECT_NE(advice[2].find("at ep 1 the bytes crossing links fall to 0.0%"), std::string::npos)
      << advice[2];
  EXPECT_NE(moeAdviceText(advice, true).find("- MoE block h.1"), std::string::npos);

  // Below every threshold: no advice.
  const std::vector<MoeBlockLoad> calm{blockLoad(0, 1000, 49, 1.49, 1.6)};
  run.report.ranks[0].commNsByDim[kEp] = 7'000'000;  // 7 of 40 ms: 17.5%
  EXPECT_TRUE(moeAdvice(calm, epCommOf(run.report, run.samples, calm, 2), 1.0).empty());
  EXPECT_EQ(moeAdviceText({}, false), "");
}

}  // namespace
}  // namespace bubblescope::analysis
