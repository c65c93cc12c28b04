// ep all-to-all time and bytes against the formula, and the MoE advice, on
// hand-built reports whose answers are worked out here.
#include "storage/analysis/moe_comm.h"

#include <gtest/gtest.h>

#include "storage/analysis/moe_advice.h"

namespace bubblescope::analysis {
namespace {

constexpr auto kEp = static_cast<size_t>(trace_model::ParallelDim::kEp);

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

// Two ranks of an ep 2 group, pp 1, 2 steps: rank 0 spent 6 ms of 20 ms in
// all-to-alls and sent 40000 B; rank 1 has no ep spans. Model: T = 2·16,
// k = 2, C = 64, 2 MoE blocks, m = 3: 4·2·32·64·(1/2)·4 B = 32768 B per
// block and micro-batch, 196608 B per step.
RunReport twoRankReport() {
  RunReport report;
  layout::Layout l;
  l.model.numLayers = 2;
  l.model.hidden = 64;
  l.model.seqLen = 16;
  l.model.experts = 4;
  l.model.topK = 2;
  l.microBatchSize = 2;
  l.microBatches = 3;
  report.layout = l;
  for (int32_t rank = 0; rank < 2; ++rank) {
    RankReport r;
    r.info.rank = rank;
    r.info.pp = 0;
    r.steps = 2;
    r.stepNs = 40'000'000;
    if (rank == 0) {
      r.commNsByDim[kEp] = 12'000'000;
      r.commBytesByDim[kEp] = 80'000;
    }
    report.ranks.push_back(r);
  }
  return report;
}

TEST(MoeCommTest, TracedBytesAndTimePerStepAgainstTheFormula) {
  // 1 of 4 assignments dropped over the blocks: the formula after drops is 3/4.
  const std::vector<MoeBlockLoad> loads{blockLoad(0, 100, 10, 1.2, 1.3),
                                        blockLoad(1, 100, 40, 1.2, 1.3)};
  const EpComm comm = epCommOf(twoRankReport(), loads, 2);
  EXPECT_EQ(comm.ep, 2);
  EXPECT_DOUBLE_EQ(*comm.dropRate, 0.25);
  ASSERT_EQ(comm.ranks.size(), 2u);  // rank 1: no spans, but a formula
  const EpRankComm& r0 = comm.ranks[0];
  EXPECT_DOUBLE_EQ(r0.timeNsPerStep, 6'000'000.0);
  EXPECT_DOUBLE_EQ(r0.bytesPerStep, 40'000.0);
  EXPECT_DOUBLE_EQ(*r0.shareOfStep, 0.3);
  EXPECT_DOUBLE_EQ(*r0.formulaBytesPerStep, 196608.0);
  EXPECT_DOUBLE_EQ(*r0.formulaAfterDropsBytesPerStep, 147456.0);
  EXPECT_DOUBLE_EQ(*r0.measuredToFormula(), 40'000.0 / 147456.0);
  EXPECT_DOUBLE_EQ(comm.ranks[1].bytesPerStep, 0.0);

  const std::string text = epCommText(comm, false);
  EXPECT_NE(text.find("ep 2"), std::string::npos) << text;
  EXPECT_NE(text.find("6.000"), std::string::npos) << text;       // ms per step
  EXPECT_NE(text.find("30.0%"), std::string::npos) << text;       // share of step
  EXPECT_NE(text.find("192.00 KiB"), std::string::npos) << text;  // 196608 B
  const auto json = epCommJson(comm);
  EXPECT_EQ(json["ep"], 2);
  EXPECT_DOUBLE_EQ(json["ranks"][0]["formula_bytes_per_step"].get<double>(), 196608.0);
  EXPECT_TRUE(json["ranks"][1]["share_of_step"].is_number());
}

TEST(MoeCommTest, NoExpertParallelismNoRows) {
  // ep 1: the formula is 0 and no rank has ep spans.
  RunReport report = twoRankReport();
  report.ranks[0].commNsByDim[kEp] = 0;
  report.ranks[0].commBytesByDim[kEp] = 0;
  EXPECT_TRUE(epCommOf(report, {}, 1).empty());
  EXPECT_EQ(epCommText(epCommOf(report, {}, 1), false), "");
}

TEST(MoeAdviceTest, RulesFireOnTheirThresholdsOnly) {
  // Block 0 balanced and not dropping; block 1 at 2.0x mean with 10% dropped.
  const std::vector<MoeBlockLoad> loads{blockLoad(0, 1000, 10, 1.1, 1.2),
                                        blockLoad(1, 1000, 100, 2.0, 2.1)};
  EpComm comm = epCommOf(twoRankReport(), loads, 2);
  const auto advice = moeAdvice(loads, comm, 1.25);
  ASSERT_EQ(advice.size(), 3u);
  EXPECT_NE(advice[0].find("h.1"), std::string::npos) << advice[0];
  EXPECT_NE(advice[0].find("2.00x"), std::string::npos) << advice[0];
  EXPECT_NE(advice[0].find("50.0%"), std::string::npos) << advice[0];  // 1 - 1/2
  // The busiest expert needs 2.1 · k·N/E: 2.1 up to a quarter, 2.25.
  EXPECT_NE(advice[1].find("from 1.25 to at least 2.25"), std::string::npos) << advice[1];
  EXPECT_NE(advice[1].find("10.0%"), std::string::npos) << advice[1];
  EXPECT_NE(advice[2].find("30.0% of the step on rank 0"), std::string::npos) << advice[2];
  // At ep 1 none of the assignments would leave a rank.
  EXPECT_NE(advice[2].find("at ep 1 the all-to-all bytes fall to 0.0%"), std::string::npos)
      << advice[2];
  EXPECT_NE(moeAdviceText(advice, true).find("- MoE block h.1"), std::string::npos);

  // Below every threshold: no advice.
  const std::vector<MoeBlockLoad> calm{blockLoad(0, 1000, 49, 1.49, 1.6)};
  RunReport quiet = twoRankReport();
  quiet.ranks[0].commNsByDim[kEp] = 7'000'000;  // 7 of 40 ms: 17.5%
  EXPECT_TRUE(moeAdvice(calm, epCommOf(quiet, calm, 2), 1.0).empty());
  EXPECT_EQ(moeAdviceText({}, false), "");
}

}  // namespace
}  // namespace bubblescope::analysis
