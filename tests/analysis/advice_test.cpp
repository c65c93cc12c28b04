// The advice rules (storage/analysis/advice.h): each fires on a report that
// should trigger it and stays silent on one just on the other side of its
// threshold; the change it names is the best of its candidates, and its
// predicted gain is exactly what layout::predictLayout returns for the run's
// layout and for the suggested one.
#include "storage/analysis/advice.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "planning/formulas.h"
#include "planning/grad_reduction_cost.h"
#include "planning/planner.h"
#include "planning/prediction.h"
#include "planning/prediction_summary.h"
#include "storage/analysis/layout_variants.h"
#include "storage/analysis/report_json.h"
#include "storage/analysis/report_text.h"
#include "storage/analysis/run_report.h"

namespace bubblescope::analysis {
namespace {

using layout::Layout;
using trace_model::ParallelDim;

constexpr int64_t kStepNs = 100'000'000;

Layout smallLayout(int32_t dp, int32_t tp, int32_t pp, int32_t m) {
  Layout l;
  l.model = *layout::modelPreset("small");  // 4 layers, 8 heads
  l.dp = dp;
  l.tp = tp;
  l.pp = pp;
  l.microBatches = m;
  return l;
}

// Compute from FLOPs at 100 GFLOP/s; every collective 50 us + 1 ns per byte.
layout::Calibration calibration() {
  layout::Calibration c = layout::flopsCalibration(*layout::modelPreset("small"), 1e11);
  for (const char* dim : {"dp", "tp", "pp"}) {
    for (const char* collective : {"allreduce", "reduce_scatter", "all_gather", "p2p"}) {
      layout::LinkFit f;
      f.dim = dim;
      f.link = "same_host";
      f.collective = collective;
      f.alphaNs = 50'000;
      f.betaNsPerByte = 1.0;
      f.samples = 4;
      c.links.push_back(f);
    }
  }
  return c;
}

// A report of `l` whose ranks each spend `commShare` of a 100 ms step on
// `dim` and whose stages' bubbles equal their formula.
RunReport reportOf(const Layout& l, ParallelDim dim = ParallelDim::kNone, double commShare = 0) {
  RunReport r;
  r.layout = l;
  r.run.info.worldSize = static_cast<int32_t>(l.worldSize());
  for (int32_t rank = 0; rank < l.worldSize(); ++rank) {
    RankReport rr;
    rr.info.rank = rank;
    rr.info.host = "h0";
    rr.info.pp = rank % l.pp;
    rr.steps = 1;
    rr.stepNs = kStepNs;
    rr.commNsByDim[static_cast<size_t>(dim)] = static_cast<int64_t>(commShare * kStepNs);
    rr.exposedCommNsByDim = rr.commNsByDim;  // none overlapped
    r.ranks.push_back(rr);
  }
  for (int32_t k = 0; k < l.pp; ++k) {
    StageReport s;
    s.stage = k;
    s.bubbleFormula = layout::formulaBubble(l);
    s.bubbleFormulaText = layout::bubbleFormulaText(l);
    s.bubbleFraction = s.bubbleFormula;
    r.stages.push_back(s);
  }
  r.stepTimeMeanNs = kStepNs;
  r.tokensPerS = 1000;
  return r;
}

std::vector<Advice> ofRule(const std::vector<Advice>& all, const std::string& rule) {
  std::vector<Advice> out;
  for (const Advice& a : all) {
    if (a.rule == rule) out.push_back(a);
  }
  return out;
}

int64_t sequences(const Layout& l) {
  return int64_t{l.dp} * l.microBatches * l.microBatchSize;
}

// The advice's gain is the predictor's, for the run's layout and the
// suggested one; no candidate of the rule that fits `budgetBytes` (when
// given) predicts more tokens/s among those that keep the global batch,
// and the advice changes the global batch only when none of those gains.
void expectPredictorGain(const Advice& a, const Layout& run, const std::vector<Layout>& candidates,
                         std::optional<double> budgetBytes = std::nullopt) {
  ASSERT_TRUE(a.layout.has_value()) << a.message;
  ASSERT_TRUE(a.predicted.has_value());
  const auto c = calibration();
  const auto before = layout::predictLayout(run, c);
  const auto after = layout::predictLayout(*a.layout, c);
  ASSERT_TRUE(before.isOk() && after.isOk());
  EXPECT_EQ(a.predicted->stepNsBefore, before->stepNs);
  EXPECT_EQ(a.predicted->stepNsAfter, after->stepNs);
  EXPECT_EQ(a.predicted->tokensPerSBefore, before->tokensPerSecond);
  EXPECT_EQ(a.predicted->tokensPerSAfter, after->tokensPerSecond);
  EXPECT_GE(a.predicted->gain(), 0.02);
  EXPECT_EQ(a.change, layoutChangeText(run, *a.layout));
  EXPECT_NE(std::find(candidates.begin(), candidates.end(), *a.layout), candidates.end());
  const bool keeps = sequences(*a.layout) == sequences(run);
  for (const Layout& l : candidates) {
    auto p = layout::predictLayout(l, c);
    if (!p.isOk()) continue;
    // Layouts priced with a guess the run's own prediction does not make
    // (a "no ..." warning: another dimension's fit, a cost taken as 0) are
    // left out of the advice.
    const bool guess = std::any_of(p->warnings.begin(), p->warnings.end(), [&](const auto& w) {
      return layout::isGuess(w) &&
             std::find(before->warnings.begin(), before->warnings.end(), w) ==
                 before->warnings.end();
    });
    if (guess) continue;
    const double peak = *std::max_element(p->memoryBytes.begin(), p->memoryBytes.end());
    if (budgetBytes && peak > *budgetBytes) continue;
    if (sequences(l) == sequences(run)) {
      const double bound = keeps ? after->tokensPerSecond : before->tokensPerSecond * 1.02;
      EXPECT_LE(p->tokensPerSecond, bound) << layoutChangeText(run, l);
    } else if (!keeps) {
      EXPECT_LE(p->tokensPerSecond, after->tokensPerSecond) << layoutChangeText(run, l);
    }
  }
  EXPECT_NE(a.predictedText().find("predicted step "), std::string::npos);
}

TEST(Advice, CommShareFiresPerDimensionAboveTwentyPercent) {
  Layout l = smallLayout(4, 1, 1, 1);
  l.overlap = false;
  const auto advice = adviseRun(reportOf(l, ParallelDim::kDp, 0.30), calibration());
  const auto comm = ofRule(advice, "comm_share");
  ASSERT_EQ(comm.size(), 1u);
  EXPECT_EQ(comm[0].dimension, "dp");
  EXPECT_NE(comm[0].message.find("30.0%"), std::string::npos) << comm[0].message;
  expectPredictorGain(comm[0], l, commVariants(l, "dp"));

  // tp communication is told apart from dp's.
  const Layout tp = smallLayout(2, 2, 1, 1);
  const auto tpAdvice =
      ofRule(adviseRun(reportOf(tp, ParallelDim::kTp, 0.25), calibration()), "comm_share");
  ASSERT_EQ(tpAdvice.size(), 1u);
  EXPECT_EQ(tpAdvice[0].dimension, "tp");
}

TEST(Advice, CommShareStaysSilentAtOrBelowTheThresholdMean) {
  const Layout l = smallLayout(4, 1, 1, 1);
  EXPECT_TRUE(
      ofRule(adviseRun(reportOf(l, ParallelDim::kDp, 0.19), calibration()), "comm_share").empty());
  // One rank at 35%, three at 5%: the mean (12.5%) is below 20%.
  RunReport r = reportOf(l, ParallelDim::kDp, 0.05);
  r.ranks[0].commNsByDim[static_cast<size_t>(ParallelDim::kDp)] = kStepNs * 35 / 100;
  EXPECT_TRUE(ofRule(adviseRun(r, calibration()), "comm_share").empty());
}

// dp communication that backward hides costs the step nothing: 30% of the
// step communicating, 6% exposed, is no finding (issue 35: the advice fired
// on 21.5% with 6% exposed and proposed tp2, which measured 8% slower).
TEST(Advice, CommShareWeighsExposedCommunicationOnly) {
  const Layout l = smallLayout(4, 1, 1, 1);
  RunReport r = reportOf(l, ParallelDim::kDp, 0.30);
  for (RankReport& rank : r.ranks) {
    rank.exposedCommNsByDim[static_cast<size_t>(ParallelDim::kDp)] = kStepNs * 6 / 100;
  }
  EXPECT_TRUE(ofRule(adviseRun(r, calibration()), "comm_share").empty());
  for (RankReport& rank : r.ranks) {
    rank.exposedCommNsByDim[static_cast<size_t>(ParallelDim::kDp)] = kStepNs * 25 / 100;
  }
  const auto comm = ofRule(adviseRun(r, calibration()), "comm_share");
  ASSERT_EQ(comm.size(), 1u);
  EXPECT_NE(comm[0].message.find("30.0% of the step, 25.0% exposed"), std::string::npos)
      << comm[0].message;
}

// A run with tiny gradient buckets: the default bucket (the real fix of
// issue 35's --bucket-elements 1000) is among the changes weighed, and the
// predictor sees its gain when each all-reduce pays a latency.
TEST(Advice, TinyBucketsAreWeighedAgainstTheDefault) {
  Layout l = smallLayout(2, 1, 1, 1);
  l.bucketElements = 1000;
  const auto variants = commVariants(l, "dp");
  Layout fixed = l;
  fixed.bucketElements.reset();
  EXPECT_NE(std::find(variants.begin(), variants.end(), fixed), variants.end());
  const auto comm =
      ofRule(adviseRun(reportOf(l, ParallelDim::kDp, 0.40), calibration()), "comm_share");
  ASSERT_EQ(comm.size(), 1u);
  expectPredictorGain(comm[0], l, variants);  // the best of them, the default bucket among them
  const auto c = calibration();
  const auto before = layout::predictLayout(l, c);
  const auto after = layout::predictLayout(fixed, c);
  ASSERT_TRUE(before.isOk() && after.isOk());
  EXPECT_GT(after->tokensPerSecond, before->tokensPerSecond * 1.02)
      << "1000-element buckets pay the all-reduce's 50 us each";
  // tp 2 would be predicted faster still, but only by scaling the layers'
  // tp 1 costs, and the compressions only from built-in codec constants:
  // guesses this run did not measure, left out and the first named
  // (issue 35: a ZeRO-3 run was advised tp 2 from the dp fit, +57%
  // predicted, -48% measured).
  EXPECT_EQ(comm[0].layout->tp, 1);
  EXPECT_FALSE(comm[0].layout->gradCompression.compresses());
  EXPECT_NE(comm[0].message.find("nearby layouts left out: this run did not measure what they "
                                 "would cost, e.g. grad_compression none -> fp16: no fp16 "
                                 "compression cost in the calibration"),
            std::string::npos)
      << comm[0].message;
  // With the codecs measured (calibrate), a compression is priced and may be named.
  layout::Calibration measured = calibration();
  for (const char* kind : {"fp16", "bf16", "int8"}) {
    measured.ops.push_back({layout::kCodecPart, kind, 0, 1, 1.0, 1.0, 5});
  }
  measured.ops.push_back({layout::kCodecPart, "powersgd", 4, 1, 1.0, 1.0, 5});
  const auto priced =
      ofRule(adviseRun(reportOf(l, ParallelDim::kDp, 0.40), measured), "comm_share");
  ASSERT_EQ(priced.size(), 1u);
  EXPECT_EQ(priced[0].message.find("grad_compression none -> fp16: no fp16"), std::string::npos)
      << priced[0].message;
}

TEST(Advice, WithoutACalibrationFindingsComeWithoutChanges) {
  const Layout l = smallLayout(4, 1, 1, 1);
  const auto comm =
      ofRule(adviseRun(reportOf(l, ParallelDim::kDp, 0.4), std::nullopt), "comm_share");
  ASSERT_EQ(comm.size(), 1u);
  EXPECT_TRUE(comm[0].change.empty());
  EXPECT_FALSE(comm[0].predicted.has_value());
  EXPECT_EQ(comm[0].predictedText(), "");
}

TEST(Advice, BubbleFarAboveItsFormulaFiresAndPointsAtTheReplayWhenOversubscribed) {
  const Layout l = smallLayout(1, 1, 4, 16);  // 1F1B formula 3/19 = 15.8%
  RunReport r = reportOf(l);
  r.stages[2].bubbleFraction = 0.55;
  auto bubble = ofRule(adviseRun(r, calibration()), "bubble_above_formula");
  ASSERT_EQ(bubble.size(), 1u);
  EXPECT_EQ(bubble[0].dimension, "pp");
  EXPECT_NE(bubble[0].message.find("stage 2"), std::string::npos) << bubble[0].message;
  EXPECT_NE(bubble[0].message.find("schedule and m"), std::string::npos);
  expectPredictorGain(bubble[0], l, bubbleVariants(l));

  r.stages[2].bubbleReplayed = 0.17;  // near the formula: the cores, not the schedule
  bubble = ofRule(adviseRun(r, calibration()), "bubble_above_formula");
  ASSERT_EQ(bubble.size(), 1u);
  EXPECT_NE(bubble[0].message.find("ideal-hardware replay gives 17.0%"), std::string::npos);
  EXPECT_NE(bubble[0].message.find("shared cores"), std::string::npos) << bubble[0].message;
  r.stages[2].bubbleReplayed = 0.45;
  bubble = ofRule(adviseRun(r, calibration()), "bubble_above_formula");
  ASSERT_EQ(bubble.size(), 1u);
  EXPECT_NE(bubble[0].message.find("still above the formula"), std::string::npos);
}

TEST(Advice, BubbleNearItsFormulaIsSilent) {
  const Layout l = smallLayout(1, 1, 4, 16);
  RunReport r = reportOf(l);
  r.stages[1].bubbleFraction = *r.stages[1].bubbleFormula + 0.09;  // under 10 points above
  EXPECT_TRUE(ofRule(adviseRun(r, calibration()), "bubble_above_formula").empty());
  // 11 points above but under 1.5 × a large formula (gpipe pp4 m2: 60%).
  const Layout big = smallLayout(1, 1, 4, 2);
  RunReport r2 = reportOf(big);
  r2.stages[0].bubbleFraction = *r2.stages[0].bubbleFormula + 0.11;
  EXPECT_TRUE(ofRule(adviseRun(r2, calibration()), "bubble_above_formula").empty());
}

TEST(Advice, ASingleStageRunHasNoBubbleAboveItsFormula) {
  // dp2 ZeRO-3: its ranks wait on the gathers, which the report counts as
  // idle; with one stage that is not a pipeline bubble (formula 0).
  const Layout l = smallLayout(2, 1, 1, 4);
  RunReport r = reportOf(l);
  ASSERT_EQ(r.stages.size(), 1u);
  r.stages[0].bubbleFraction = 0.30;
  EXPECT_TRUE(ofRule(adviseRun(r, calibration()), "bubble_above_formula").empty());
}

TEST(Advice, FewMicroBatchesFiresBelowFourPerStage) {
  const Layout l = smallLayout(1, 1, 4, 2);
  const auto few = ofRule(adviseRun(reportOf(l), calibration()), "few_micro_batches");
  ASSERT_EQ(few.size(), 1u);
  EXPECT_NE(few[0].message.find("m = 2 micro-batches for 4 stages"), std::string::npos);
  EXPECT_NE(few[0].message.find("60.0%"), std::string::npos) << few[0].message;  // 3/5
  expectPredictorGain(few[0], l, microBatchVariants(l, 4));
  EXPECT_GT(few[0].layout->microBatches, 2);
  EXPECT_NE(few[0].change.find("m 2 -> "), std::string::npos) << few[0].change;
  // The FLOPs calibration holds micro-batch size 1, the size named.
  EXPECT_EQ(few[0].message.find("not measured"), std::string::npos) << few[0].message;
  // A calibration measured at b = 4 only: layouts at b = 1 or 2 are left
  // out, and the message says so.
  layout::Calibration at4 = calibration();
  for (layout::OpCostEntry& e : at4.ops) {
    if (e.microBatchSize != 1) continue;
    e.microBatchSize = 4;
    e.wallNs *= 4;
    e.cpuNs *= 4;
  }
  Layout b4 = l;
  b4.microBatchSize = 4;
  const auto fewB4 = ofRule(adviseRun(reportOf(b4), at4), "few_micro_batches");
  ASSERT_EQ(fewB4.size(), 1u);
  if (fewB4[0].layout) {
    EXPECT_EQ(fewB4[0].layout->microBatchSize, 4) << fewB4[0].change;
  }
  EXPECT_NE(fewB4[0].message.find("micro-batch size 1, 2 not measured"), std::string::npos)
      << fewB4[0].message;

  EXPECT_TRUE(
      ofRule(adviseRun(reportOf(smallLayout(1, 1, 4, 16)), calibration()), "few_micro_batches")
          .empty());
  EXPECT_TRUE(
      ofRule(adviseRun(reportOf(smallLayout(1, 1, 2, 8)), calibration()), "few_micro_batches")
          .empty());
  EXPECT_TRUE(
      ofRule(adviseRun(reportOf(smallLayout(4, 1, 1, 1)), calibration()), "few_micro_batches")
          .empty());
}

TEST(Advice, StragglerFiresWithTheStepPredictedWithoutIt) {
  const Layout l = smallLayout(2, 1, 2, 8);
  RunReport r = reportOf(l);
  EXPECT_TRUE(ofRule(adviseRun(r, calibration()), "straggler").empty());
  r.ranks[3].info.host = "h1";
  r.stragglers.push_back({3, "compute", 5e6, 3, 4});
  const auto s = ofRule(adviseRun(r, calibration()), "straggler");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_NE(s[0].message.find("rank 3 (host h1, stage 1)"), std::string::npos) << s[0].message;
  EXPECT_NE(s[0].change.find("host h1"), std::string::npos);
  ASSERT_TRUE(s[0].predicted.has_value());
  EXPECT_TRUE(s[0].predicted->measuredBefore);
  EXPECT_EQ(s[0].predicted->stepNsBefore, kStepNs);
  EXPECT_EQ(s[0].predicted->stepNsAfter, layout::predictLayout(l, calibration())->stepNs);
  EXPECT_NE(s[0].predictedText().find("measured step 100.000 ms -> predicted"), std::string::npos)
      << s[0].predictedText();
  // A calibration's straggler factor is what the straggler costs: the step
  // without stragglers is predicted without it.
  layout::Calibration stretched = calibration();
  stretched.ops.push_back({"step", "straggler", 0, 1, 1.5, 1.5, 1});
  const auto t = ofRule(adviseRun(r, stretched), "straggler");
  ASSERT_EQ(t.size(), 1u);
  ASSERT_TRUE(t[0].predicted.has_value());
  EXPECT_EQ(t[0].predicted->stepNsAfter, layout::predictLayout(l, calibration())->stepNs);
  EXPECT_GT(layout::predictLayout(l, stretched)->stepNs, t[0].predicted->stepNsAfter);
}

// An imported rank may know neither its host nor its stage: the advice names
// what is known and nothing else (not "rank 1 (host , stage -1)").
TEST(Advice, StragglerNamesHostAndStageOnlyWhenKnown) {
  const Layout l = smallLayout(2, 1, 2, 8);
  RunReport r = reportOf(l);
  r.ranks[3].info.host = "";
  r.ranks[3].info.pp = -1;
  r.ranks[1].info.host = "";
  r.stragglers.push_back({3, "compute", 5e6, 3, 4});
  r.stragglers.push_back({1, "compute", 5e6, 3, 4});
  const auto s = ofRule(adviseRun(r, calibration()), "straggler");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_NE(s[0].message.find("rank 3 is late"), std::string::npos) << s[0].message;
  EXPECT_EQ(s[0].message.find("host"), std::string::npos) << s[0].message;
  EXPECT_EQ(s[0].message.find("-1"), std::string::npos) << s[0].message;
  EXPECT_EQ(s[0].change.find("off host"), std::string::npos) << s[0].change;
  EXPECT_NE(s[1].message.find("rank 1 (stage 1) is late"), std::string::npos) << s[1].message;
}

TEST(Advice, StragglersOfAnOversubscribedRunGetOneCorePerRank) {
  const Layout l = smallLayout(2, 1, 2, 8);
  RunReport r = reportOf(l);
  for (RankReport& rank : r.ranks) {
    rank.info.coresOnHost = 2;
    rank.info.ranksOnHost = 4;
  }
  r.stragglers.push_back({1, "collective arrival", 5e6, 3, 4});
  r.stragglers.push_back({3, "compute", 5e6, 3, 4});
  const auto s = ofRule(adviseRun(r, calibration()), "straggler");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_NE(s[0].message.find("ranks 1, 3 straggle"), std::string::npos) << s[0].message;
  EXPECT_NE(s[0].change.find("one core per rank"), std::string::npos);
  ASSERT_TRUE(s[0].predicted.has_value());
  EXPECT_EQ(s[0].predicted->stepNsAfter, layout::predictLayout(l, calibration())->stepNs);

  // One host, not oversubscribed: nothing to move off.
  for (RankReport& rank : r.ranks) rank.info.ranksOnHost = 2;
  const auto one = ofRule(adviseRun(r, calibration()), "straggler");
  ASSERT_EQ(one.size(), 2u);
  EXPECT_EQ(one[1].change,
            "find what slows rank 3 (other processes on its cores, its data loading)");
}

double predictedPeak(const Layout& l) {
  const auto p = layout::predictLayout(l, calibration());
  EXPECT_TRUE(p.isOk());
  return p.isOk() ? *std::max_element(p->memoryBytes.begin(), p->memoryBytes.end()) : 0.0;
}

TEST(Advice, MemoryHeadroomNamesALowerZeroStageThatFitsTheBudget) {
  Layout l = smallLayout(2, 1, 1, 2);
  l.zeroStage = layout::ZeroStage::kParameters;
  l.bucketElements = 4096;  // small buckets: the kept states dominate
  Layout zero2 = l;
  zero2.zeroStage = layout::ZeroStage::kGradients;
  const double peak = predictedPeak(l);
  ASSERT_GT(predictedPeak(zero2), peak);  // lower stages keep more

  AdviceOptions o;
  EXPECT_TRUE(ofRule(adviseRun(reportOf(l), calibration(), o), "memory_headroom").empty());
  o.memoryPerRankBytes = peak;  // only the run's own layout fits
  EXPECT_TRUE(ofRule(adviseRun(reportOf(l), calibration(), o), "memory_headroom").empty());

  // Room for ZeRO 2, nothing more.
  o.memoryPerRankBytes = predictedPeak(zero2);
  auto m = ofRule(adviseRun(reportOf(l), calibration(), o), "memory_headroom");
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].change, "zero 3 -> 2");
  EXPECT_EQ(m[0].dimension, "zero");
  expectPredictorGain(m[0], l, memoryVariants(l), o.memoryPerRankBytes);

  o.memoryPerRankBytes = 64.0 * 1024 * 1024 * 1024;  // everything fits: the fastest
  m = ofRule(adviseRun(reportOf(l), calibration(), o), "memory_headroom");
  ASSERT_EQ(m.size(), 1u);
  expectPredictorGain(m[0], l, memoryVariants(l));
  EXPECT_LE(m[0].predicted->peakMemoryBytesAfter, *o.memoryPerRankBytes);
  EXPECT_NE(m[0].message.find("64.00 GiB budget"), std::string::npos) << m[0].message;
}

TEST(Advice, MemoryHeadroomNamesRecomputeOffWhenItFits) {
  Layout l = smallLayout(1, 1, 2, 8);
  l.schedule = layout::ScheduleKind::kGPipe;  // 8 micro-batches in flight
  l.recompute = true;
  Layout off = l;
  off.recompute = false;
  ASSERT_GT(predictedPeak(off), predictedPeak(l));
  AdviceOptions o;
  o.memoryPerRankBytes = predictedPeak(l);
  EXPECT_TRUE(ofRule(adviseRun(reportOf(l), calibration(), o), "memory_headroom").empty());
  o.memoryPerRankBytes = predictedPeak(off);
  const auto m = ofRule(adviseRun(reportOf(l), calibration(), o), "memory_headroom");
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].change, "recompute on -> off");
  EXPECT_EQ(m[0].dimension, "");
  expectPredictorGain(m[0], l, memoryVariants(l), o.memoryPerRankBytes);
}

// report's three forms carry each piece of advice: text and Markdown in an
// "Advice" section, JSON in the documented `advice` array.
TEST(Advice, ReportTextMarkdownAndJsonShowTheAdvice) {
  const Layout l = smallLayout(1, 1, 4, 2);
  RunReport r = reportOf(l);
  r.advice = adviseRun(r, calibration());
  const auto few = ofRule(r.advice, "few_micro_batches");
  ASSERT_EQ(few.size(), 1u);
  ASSERT_TRUE(few[0].predicted.has_value());

  const std::string text = reportToText(r, /*markdown=*/false);
  EXPECT_NE(text.find("\nAdvice (gains predicted from this run's own calibration)\n"
                      "few_micro_batches pp: " +
                      few[0].message + "\n  change: " + few[0].change + "\n  " +
                      few[0].predictedText() + "\n"),
            std::string::npos)
      << text;
  const std::string md = reportToText(r, /*markdown=*/true);
  EXPECT_NE(md.find("- **few_micro_batches** pp: " + few[0].message + "\n  - change: `" +
                    few[0].change + "`\n  - " + few[0].predictedText() + "\n"),
            std::string::npos)
      << md;

  const auto j = runToJson(r);
  ASSERT_TRUE(j.contains("advice"));
  const auto& a = j["advice"][0];
  EXPECT_EQ(a["rule"], "few_micro_batches");
  EXPECT_EQ(a["dimension"], "pp");
  EXPECT_EQ(a["message"], few[0].message);
  EXPECT_EQ(a["change"], few[0].change);
  EXPECT_EQ(a["layout"]["micro_batches"], few[0].layout->microBatches);
  EXPECT_EQ(a["predicted"]["before"], "predicted");
  EXPECT_DOUBLE_EQ(a["predicted"]["step_ms_before"].get<double>(),
                   few[0].predicted->stepNsBefore / 1e6);
  EXPECT_DOUBLE_EQ(a["predicted"]["step_ms_after"].get<double>(),
                   few[0].predicted->stepNsAfter / 1e6);
  EXPECT_DOUBLE_EQ(a["predicted"]["gain"].get<double>(), few[0].predicted->gain());

  // No advice: no section, an empty array.
  r.advice.clear();
  EXPECT_EQ(reportToText(r, false).find("Advice"), std::string::npos);
  EXPECT_TRUE(runToJson(r)["advice"].empty());
}

TEST(Advice, LayoutChangeTextNamesTheFieldsThatDiffer) {
  Layout from = smallLayout(1, 1, 4, 8);
  Layout to = withDegrees(from, 2, 1, 2);
  EXPECT_EQ(layoutChangeText(from, to), "dp 1 -> 2, pp 4 -> 2, m 8 -> 4");
  from.zeroStage = layout::ZeroStage::kGradients;
  from.recompute = true;
  to = from;
  to.zeroStage = layout::ZeroStage::kOptimizer;
  to.recompute = false;
  EXPECT_EQ(layoutChangeText(from, to), "zero 2 -> 1, recompute on -> off");
  EXPECT_EQ(layoutChangeText(from, from), "");
  to = from;
  to.microBatches = 16;  // b stays 1: 8 more sequences per step
  EXPECT_EQ(layoutChangeText(from, to), "m 8 -> 16, global batch 8 -> 16");
  // The data-parallel knobs (issue 35: the default bucket was advised with
  // an empty change).
  from = smallLayout(2, 1, 1, 4);
  from.bucketElements = 1000;
  to = from;
  to.bucketElements.reset();
  EXPECT_EQ(layoutChangeText(from, to), "bucket 1000 elements -> 25 MiB");
  to = from;
  to.gradCompression = layout::parseGradCompression("int8").value();
  to.allReduce = layout::AllReduceAlgorithm::kHierarchical;
  EXPECT_EQ(layoutChangeText(from, to),
            "grad_compression none -> int8, all_reduce flat -> hierarchical");
}

TEST(Advice, VariantsKeepTheWorldAndAreValid) {
  Layout l = smallLayout(2, 2, 2, 4);
  l.globalBatch = 8;
  for (const std::string dim : {"dp", "tp", "pp"}) {
    for (const Layout& v : commVariants(l, dim)) {
      EXPECT_EQ(v.worldSize(), 8);
      EXPECT_TRUE(layout::validate(v, 8).isOk()) << layoutChangeText(l, v);
      EXPECT_NE(v, l);
    }
  }
  const Layout moved = withDegrees(l, 4, 2, 1);
  EXPECT_EQ(moved.microBatches, 2);  // dp × m kept: 2 × 4 = 4 × 2
  EXPECT_EQ(*moved.globalBatch, 8);
}

}  // namespace
}  // namespace bubblescope::analysis
