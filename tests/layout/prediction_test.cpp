// The cost model: alpha-beta fits, calibration lookups and the prediction of
// a layout's step from known per-layer costs (planning/prediction.h).
#include "planning/prediction.h"
#include "planning/prediction_summary.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "planning/formulas.h"

namespace bubblescope::layout {
namespace {

constexpr double kMs = 1e6;

TEST(AlphaBetaFit, RecoversLatencyAndBandwidthExactly) {
  std::vector<std::pair<double, double>> points;
  for (double bytes : {1e3, 1e5, 1e6, 4e6}) points.emplace_back(bytes, 5000.0 + 0.25 * bytes);
  const LinkFit f = fitAlphaBeta(points);
  EXPECT_NEAR(f.alphaNs, 5000.0, 1e-6);
  EXPECT_NEAR(f.betaNsPerByte, 0.25, 1e-12);
  EXPECT_EQ(f.minBytes, 1000);
  EXPECT_EQ(f.maxBytes, 4000000);
  EXPECT_NEAR(f.timeNs(2e6), 5000.0 + 0.5e6, 1e-6);
}

TEST(AlphaBetaFit, OneSizeIsLatencyWhenSmallAndBandwidthWhenLarge) {
  const LinkFit small = fitAlphaBeta({{8, 30000}, {8, 50000}});
  EXPECT_DOUBLE_EQ(small.alphaNs, 40000);
  EXPECT_DOUBLE_EQ(small.betaNsPerByte, 0);
  const LinkFit large = fitAlphaBeta({{1 << 20, 2e6}});
  EXPECT_DOUBLE_EQ(large.alphaNs, 0);
  EXPECT_DOUBLE_EQ(large.betaNsPerByte, 2e6 / (1 << 20));
}

TEST(AlphaBetaFit, DecreasingTimesClampToAConstant) {
  const LinkFit f = fitAlphaBeta({{1e3, 900}, {1e6, 100}});
  EXPECT_DOUBLE_EQ(f.betaNsPerByte, 0);
  EXPECT_DOUBLE_EQ(f.alphaNs, 500);
}

Calibration blockCalibration(double fwdMs, double bwdMs, double optNsPerParam = 0) {
  Calibration c;
  c.model = defaultLayoutModel();
  // Move-assigned: GCC 12 at -O3 warns (-Wrestrict, a false positive) on a
  // literal assigned to this inlined string.
  c.host = std::string("h");
  c.cores = 2;
  c.ranksPerHost = 1;
  for (const char* part : {"block", "embedding", "head"}) {
    const bool block = std::string(part) == "block";
    c.ops.push_back({part, "forward", 1, 1, block ? fwdMs * kMs : 0, block ? fwdMs * kMs : 0, 1});
    c.ops.push_back({part, "backward", 1, 1, block ? bwdMs * kMs : 0, block ? bwdMs * kMs : 0, 1});
  }
  c.ops.push_back({"optimizer", "step", 0, 1, optNsPerParam, optNsPerParam, 1});
  return c;
}

TEST(CalibrationLookup, InterpolatesInMicroBatchSizeAndScalesByTp) {
  Calibration c;
  c.ops.push_back({"block", "forward", 1, 1, 10, 4, 1});
  c.ops.push_back({"block", "forward", 2, 1, 18, 6, 1});
  EXPECT_DOUBLE_EQ(*c.opCostNs("block", "forward", 3, 1, false), 26);  // extrapolated
  EXPECT_DOUBLE_EQ(*c.opCostNs("block", "forward", 2, 1, true), 6);
  EXPECT_DOUBLE_EQ(*c.opCostNs("block", "forward", 2, 2, false), 9);  // split over tp 2
  EXPECT_FALSE(c.opCostNs("block", "backward", 1, 1, false));
  Calibration one;
  one.ops.push_back({"head", "forward", 2, 1, 8, 8, 1});
  EXPECT_DOUBLE_EQ(*one.opCostNs("head", "forward", 4, 1, false), 16);  // through the origin
}

TEST(Prediction, SingleRankStepIsTheSumOfItsOps) {
  Layout l;  // tiny: 2 layers
  l.microBatches = 4;
  auto p = predictLayout(l, blockCalibration(1.0, 2.0, 10.0));
  ASSERT_TRUE(p.isOk()) << p.status().message();
  const double optimizer = 10.0 * l.model.parameterCount();
  EXPECT_NEAR(p->stepNs, 4 * 2 * (1.0 + 2.0) * kMs + optimizer, 1.0);
  EXPECT_NEAR(p->tokensPerSecond, 4.0 * l.model.seqLen / (p->stepNs * 1e-9), 1e-6);
  ASSERT_EQ(p->bubble.size(), 1u);
  EXPECT_NEAR(p->bubble[0], 0.0, 1e-12);
  EXPECT_TRUE(p->warnings.empty());
}

TEST(Prediction, RecomputeRunsTheForwardAgainBeforeEachBackward) {
  Layout l;
  l.microBatches = 3;
  l.recompute = true;
  auto p = predictLayout(l, blockCalibration(1.0, 2.0));
  ASSERT_TRUE(p.isOk()) << p.status().message();
  EXPECT_NEAR(p->stepNs, 3 * 2 * (1.0 + 1.0 + 2.0) * kMs, 1.0);
  // Only the stage input (B, T, C) of each micro-batch is kept, plus one
  // micro-batch's full activations during its backward.
  Layout keep = l;
  keep.recompute = false;
  EXPECT_LT(p->activationBytes[0], activationBytesPerMicroBatch(keep, 2, true, true) + 1.0 +
                                       4.0 * l.model.seqLen * l.model.hidden);
}

TEST(Prediction, EvenPipelineStagesReachTheFormulaBubble) {
  for (ScheduleKind kind : {ScheduleKind::kGPipe, ScheduleKind::kOneFOneB}) {
    Layout l;
    l.pp = 2;
    l.microBatches = 4;
    l.schedule = kind;
    auto p = predictLayout(l, blockCalibration(1.0, 2.0));
    ASSERT_TRUE(p.isOk()) << p.status().message();
    ASSERT_EQ(p->bubble.size(), 2u);
    for (double b : p->bubble) EXPECT_NEAR(b, formulaBubble(l), 1e-9) << scheduleKindName(kind);
    EXPECT_NEAR(p->stepNs, (4 + 1) * 3.0 * kMs, 1.0);
  }
}

TEST(Prediction, PipelineTransfersAndTensorParallelAllReducesAddTheirFittedTimes) {
  Calibration c = blockCalibration(1.0, 2.0);
  LinkFit p2p{"pp", "same_host", "p2p", 2, 100000, 0, 1, 1, 1};
  c.links.push_back(p2p);
  Layout l;
  l.pp = 2;
  l.microBatches = 1;
  auto p = predictLayout(l, c);
  ASSERT_TRUE(p.isOk()) << p.status().message();
  // F0, transfer, F1, B1, transfer, B0.
  EXPECT_NEAR(p->stepNs, (1.0 + 0.1 + 1.0 + 2.0 + 0.1 + 2.0) * kMs, 1.0);
  EXPECT_NEAR(p->exposedCommNs.at("pp"), 0.1 * kMs, 1.0);

  LinkFit ar{"tp", "same_host", "allreduce", 2, 50000, 0, 1, 1, 1};
  c.links.push_back(ar);
  Layout t;
  t.tp = 2;
  auto q = predictLayout(t, c);
  ASSERT_TRUE(q.isOk()) << q.status().message();
  // Compute halves over tp 2; 2 all-reduces forward and 2 backward per
  // layer, and the gradient norm's all-reduce before the optimizer.
  EXPECT_NEAR(q->stepNs, 2 * (0.5 + 1.0) * kMs + (2 * 4 + 1) * 0.05 * kMs, 1.0);
  EXPECT_NEAR(q->exposedCommNs.at("tp"), 2 * 4 * 0.05 * kMs, 1.0);
}

// ZeRO 2/3's per-micro-batch gradient handling (kZeroBucketPart): each
// ReduceScatterGrads of a micro-batch adds the measured work per element
// (compute) and the slowest rank's excess (waited in the reduce-scatter:
// exposed zero communication) times the stage's gradients; ZeRO 1 has no
// such op. Without the entries a ZeRO 2 prediction says so.
// The block calibration with ZeRO's reduce-scatter and all-gather and dp's
// all-reduce fitted (1 µs latency each).
Calibration zeroFitsCalibration() {
  Calibration c = blockCalibration(1.0, 2.0);
  c.links.push_back({"zero", "same_host", "reduce_scatter", 2, 1000, 0, 1, 1, 1});
  c.links.push_back({"zero", "same_host", "all_gather", 2, 1000, 0, 1, 1, 1});
  c.links.push_back({"dp", "same_host", "allreduce", 2, 1000, 0, 1, 1, 1});
  return c;
}

// ZeRO-3's gathers, one per layer slot and pass: the per-layer fit
// (kMicroBatchAllGather) when measured. dp2 m1 of the default model (2
// blocks, embedding, head: 4 slots; forward and backward gather): 8 calls
// more at 1 ms than at ZeRO 1's 1 µs.
TEST(Prediction, PredictZeroThreesGathersTakeThePerLayerFit) {
  Calibration c = zeroFitsCalibration();
  Layout l;
  l.dp = 2;
  l.zeroStage = ZeroStage::kParameters;
  auto once = predictLayout(l, c);
  ASSERT_TRUE(once.isOk()) << once.status().message();
  c.links.push_back({"zero", "same_host", kMicroBatchAllGather, 2, 1e6, 0, 1, 1, 1});
  auto layer = predictLayout(l, c);
  ASSERT_TRUE(layer.isOk()) << layer.status().message();
  EXPECT_NEAR(layer->stepNs - once->stepNs, 8 * (1e6 - 1000), 1.0);
  EXPECT_NEAR(layer->exposedCommNs.at("zero") - once->exposedCommNs.at("zero"),
              8 * (1e6 - 1000), 1.0);
}

TEST(Prediction, PredictZeroTwoAndThreeAddTheMeasuredBucketCostPerMicroBatch) {
  Calibration c = zeroFitsCalibration();
  Layout l;
  l.dp = 2;
  l.microBatches = 3;
  const double psi = static_cast<double>(l.model.parameterCount());
  for (ZeroStage z : {ZeroStage::kGradients, ZeroStage::kParameters}) {
    l.zeroStage = z;
    auto without = predictLayout(l, c);
    ASSERT_TRUE(without.isOk()) << without.status().message();
    ASSERT_EQ(std::count_if(without->warnings.begin(), without->warnings.end(),
                            [](const std::string& w) {
                              return isGuess(w) && w.find("bucket") != std::string::npos;
                            }),
              1);
    Calibration measured = c;
    measured.ops.push_back({kZeroBucketPart, kZeroBucketOp, 0, 1, 2.0, 2.0, 1});
    measured.ops.push_back({kZeroBucketPart, kZeroBucketSkewOp, 0, 1, 0.5, 0.5, 1});
    auto with = predictLayout(l, measured);
    ASSERT_TRUE(with.isOk()) << with.status().message();
    for (const std::string& w : with->warnings) EXPECT_EQ(w.find("bucket"), std::string::npos) << w;
    // One reduce-scatter per micro-batch, each 2 + 0.5 ns per element of
    // Ψ, of which the skew's 0.5 is waited in the reduce-scatter.
    EXPECT_NEAR(with->stepNs - without->stepNs, 3 * 2.5 * psi, 1.0);
    EXPECT_NEAR(with->exposedCommNs.at("zero") - without->exposedCommNs.at("zero"), 3 * 0.5 * psi,
                1.0);
  }
  l.zeroStage = ZeroStage::kOptimizer;
  Calibration measured = c;
  measured.ops.push_back({kZeroBucketPart, kZeroBucketOp, 0, 1, 2.0, 2.0, 1});
  auto one = predictLayout(l, measured);
  auto oneWithout = predictLayout(l, c);
  ASSERT_TRUE(one.isOk() && oneWithout.isOk());
  EXPECT_DOUBLE_EQ(one->stepNs, oneWithout->stepNs);
  EXPECT_TRUE(oneWithout->warnings.empty());
}

// ZeRO 2/3's per-micro-batch reduce-scatters take their own fit
// (kMicroBatchReduceScatter) when the calibration has one; ZeRO 1's
// once-a-step reduce-scatter keeps the "reduce_scatter" fit.
TEST(Prediction, PredictPerMicroBatchReduceScattersUseTheirOwnFit) {
  Calibration c = zeroFitsCalibration();
  c.ops.push_back({kZeroBucketPart, kZeroBucketOp, 0, 1, 0.0, 0.0, 1});
  Layout l;
  l.dp = 2;
  l.microBatches = 3;
  const double bytes = 4.0 * static_cast<double>(l.model.parameterCount());
  Calibration own = c;
  own.links.push_back({"zero", "same_host", kMicroBatchReduceScatter, 2, 5000, 0.25, 1, 1, 1});
  for (ZeroStage z : {ZeroStage::kGradients, ZeroStage::kParameters}) {
    l.zeroStage = z;
    auto shared = predictLayout(l, c);
    auto apart = predictLayout(l, own);
    ASSERT_TRUE(shared.isOk() && apart.isOk());
    // Per micro-batch: alpha once per layer slot (the blocks, the embedding
    // and the head, as every ZeRO collective of a chunk is priced), 5 us
    // instead of ZeRO 1's 1 us, plus 0.25 ns/B.
    const double slots = l.model.numLayers + 2;
    const double perMicroBatch = slots * (5000 - 1000) + 0.25 * bytes;
    EXPECT_NEAR(apart->stepNs - shared->stepNs, 3 * perMicroBatch, 1.0);
    EXPECT_NEAR(apart->exposedCommNs.at("zero") - shared->exposedCommNs.at("zero"),
                3 * perMicroBatch, 1.0);
  }
  l.zeroStage = ZeroStage::kOptimizer;
  auto one = predictLayout(l, own);
  auto oneShared = predictLayout(l, c);
  ASSERT_TRUE(one.isOk() && oneShared.isOk());
  EXPECT_DOUBLE_EQ(one->stepNs, oneShared->stepNs);
}

TEST(Prediction, TimeOutsideOpsIsChargedPerParameterTheRankHolds) {
  Calibration c = blockCalibration(1.0, 2.0, 10.0);
  c.ops.push_back({"step", "other", 0, 1, 3.0, 3.0, 1});
  Layout l;
  l.microBatches = 2;
  auto p = predictLayout(l, c);
  ASSERT_TRUE(p.isOk()) << p.status().message();
  const double psi = static_cast<double>(l.model.parameterCount());
  EXPECT_NEAR(p->stepNs, 2 * 2 * 3.0 * kMs + (10.0 + 3.0) * psi, 1.0);
  EXPECT_TRUE(p->warnings.empty());
  // Busy in the simulation, but no span covers it: idle in `report`'s
  // bubble, and so in the predicted one.
  EXPECT_DOUBLE_EQ(p->simulation.stages[0].idle, 0.0);
  ASSERT_EQ(p->bubble.size(), 1u);
  EXPECT_NEAR(p->bubble[0], 3.0 * psi / p->stepNs, 1e-9);
  // Per-parameter costs are not split again over tp: the parameters are.
  c.links.push_back({"tp", "same_host", "allreduce", 2, 0, 0, 1, 1, 1});
  Layout t = l;
  t.tp = 2;
  auto q = predictLayout(t, c);
  ASSERT_TRUE(q.isOk()) << q.status().message();
  const double psiTp = psi / 2;  // the predictor splits every parameter over tp
  EXPECT_NEAR(q->stepNs, 2 * 2 * 1.5 * kMs + 13.0 * psiTp, 0.02 * 13.0 * psiTp);
}

// The bubble is what `report` measures, (wait + idle) / step: like the
// step's time outside ops (above), ZeRO 2/3's bucket work is idle there
// where no op-level span covers it (ZeRO-3's passes, which block on
// gathers), but not under ZeRO-2's op spans.
TEST(Prediction, PredictedBubbleCountsTheBucketWorkNoSpanCovers) {
  Calibration z = zeroFitsCalibration();
  z.ops.push_back({kZeroBucketPart, kZeroBucketOp, 0, 1, 2.0, 2.0, 1});
  Calibration none = z;
  none.ops.back().wallNs = none.ops.back().cpuNs = 0.0;
  Layout d;
  d.dp = 2;
  d.microBatches = 3;
  const double psi = static_cast<double>(d.model.parameterCount());
  for (ZeroStage stage : {ZeroStage::kGradients, ZeroStage::kParameters}) {
    d.zeroStage = stage;
    auto with = predictLayout(d, z);
    auto without = predictLayout(d, none);
    ASSERT_TRUE(with.isOk() && without.isOk());
    const double idle = with->bubble[0] * with->stepNs - without->bubble[0] * without->stepNs;
    // Three micro-batches of 2 ns per element of the stage's Ψ.
    EXPECT_NEAR(idle, stage == ZeroStage::kParameters ? 3 * 2.0 * psi : 0.0, 1.0)
        << "ZeRO " << zeroStageNumber(stage);
  }
}

TEST(Prediction, StragglerFactorStretchesComputeOfMultiRankLayoutsOnly) {
  Calibration c = blockCalibration(1.0, 2.0);
  c.ops.push_back({"step", "straggler", 0, 1, 1.25, 1.0, 1});
  c.links.push_back({"dp", "same_host", "allreduce", 2, 0, 0.0, 1, 1, 1});  // free
  Layout one;
  one.microBatches = 2;
  auto p = predictLayout(one, c);
  ASSERT_TRUE(p.isOk()) << p.status().message();
  EXPECT_NEAR(p->stepNs, 2 * 2 * 3.0 * kMs, 1.0);
  Layout two = one;
  two.dp = 2;
  auto q = predictLayout(two, c);
  ASSERT_TRUE(q.isOk()) << q.status().message();
  EXPECT_NEAR(q->stepNs, 1.25 * 2 * 2 * 3.0 * kMs, 1.0);
  // Below 1 (a faster slowest rank cannot be) reads as 1.
  c.ops.back().wallNs = 0.5;
  EXPECT_DOUBLE_EQ(c.stragglerFactor(false), 1.0);
}

// 4 ranks on the calibrated machine's 2 cores time-share them: compute
// takes 4/2 as long, and the prediction says it predicts an oversubscribed
// run; on 4 cores, or with hosts that give each rank its own core, nothing
// changes (issue 35, point 1).
TEST(Prediction, MoreRanksThanCoresTimeShareTheCompute) {
  Calibration c = blockCalibration(1.0, 2.0);
  c.links.push_back({"dp", "same_host", "allreduce", 4, 0, 0.0, 1, 1, 1});  // free
  c.links.push_back({"dp", "other_host", "allreduce", 4, 0, 0.0, 1, 1, 1});
  c.links.push_back({"dp", "shared_cores", "allreduce", 4, 0, 0.0, 1, 1, 1});
  Layout l;  // tiny: 2 layers of 1 + 2 ms per micro-batch
  l.dp = 4;
  l.microBatches = 2;
  c.cores = 4;
  auto enough = predictLayout(l, c);
  ASSERT_TRUE(enough.isOk()) << enough.status().message();
  EXPECT_NEAR(enough->stepNs, 2 * 2 * 3.0 * kMs, 1.0);
  EXPECT_TRUE(enough->warnings.empty());
  c.cores = 2;
  auto shared = predictLayout(l, c);
  ASSERT_TRUE(shared.isOk()) << shared.status().message();
  EXPECT_NEAR(shared->stepNs, 2.0 * 2 * 2 * 3.0 * kMs, 1.0);
  ASSERT_EQ(shared->warnings.size(), 1u);
  EXPECT_EQ(shared->warnings[0],
            "4 ranks on a host of 2 cores: they share the cores (oversubscribed), so compute is "
            "predicted 2.00x slower (time-sharing)");
  Layout spread = l;
  spread.hosts = {"a:2", "b:2"};
  auto placed = predictLayout(spread, c);
  ASSERT_TRUE(placed.isOk()) << placed.status().message();
  EXPECT_NEAR(placed->stepNs, 2 * 2 * 3.0 * kMs, 1.0);
  c.cores = 0;  // unknown (a hardware profile): no limit
  auto unknown = predictLayout(l, c);
  ASSERT_TRUE(unknown.isOk());
  EXPECT_NEAR(unknown->stepNs, 2 * 2 * 3.0 * kMs, 1.0);
}

TEST(Prediction, SplitBackwardFromAFusedCalibrationIsHalvedAndSaidSo) {
  Layout l;
  l.pp = 2;
  l.microBatches = 4;
  l.schedule = ScheduleKind::kZeroBubbleH1;
  auto p = predictLayout(l, blockCalibration(1.0, 2.0));
  ASSERT_TRUE(p.isOk()) << p.status().message();
  bool said = false;
  for (const auto& w : p->warnings) said |= w.find("half its backward") != std::string::npos;
  EXPECT_TRUE(said);
  Layout f = l;
  f.schedule = ScheduleKind::kOneFOneB;
  auto q = predictLayout(f, blockCalibration(1.0, 2.0));
  ASSERT_TRUE(q.isOk());
  EXPECT_LT(p->stepNs, q->stepNs);  // ZB-H1 fills 1F1B's cool-down with W
  EXPECT_LT(p->bubble[0], q->bubble[0]);
}

TEST(Prediction, BadInputIsOneClearError) {
  Layout bad;
  bad.pp = 4;  // tiny has 2 layers
  auto p = predictLayout(bad, blockCalibration(1.0, 2.0));
  ASSERT_FALSE(p.isOk());
  EXPECT_NE(p.status().message().find("invalid layout"), std::string::npos);
  Calibration empty;
  empty.model = defaultLayoutModel();
  auto q = predictLayout(Layout{}, empty);
  ASSERT_FALSE(q.isOk());
  EXPECT_NE(q.status().message().find("no forward cost of a block"), std::string::npos);
  Calibration other = blockCalibration(1.0, 2.0);
  other.model.hidden = 64;
  auto r = predictLayout(Layout{}, other);
  ASSERT_TRUE(r.isOk());
  ASSERT_FALSE(r->warnings.empty());
  EXPECT_NE(r->warnings[0].find("not on this one"), std::string::npos);
}

// Issue 35: a prediction says what its calibration did not measure.
bool hasWarning(const Prediction& p, const std::string& text) {
  return std::any_of(p.warnings.begin(), p.warnings.end(),
                     [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

TEST(Prediction, SaysWhenLayerCostsComeFromAnotherTpOrMicroBatchSize) {
  const Calibration c = blockCalibration(1.0, 2.0);  // tp 1, b 1
  Layout exact;
  exact.microBatches = 2;
  auto p = predictLayout(exact, c);
  ASSERT_TRUE(p.isOk());
  EXPECT_FALSE(hasWarning(*p, "no layer costs measured at tp")) << ::testing::PrintToString(p->warnings);
  EXPECT_FALSE(hasWarning(*p, "micro-batch size")) << ::testing::PrintToString(p->warnings);

  Layout tp2 = exact;
  tp2.tp = 2;
  auto t = predictLayout(tp2, c);
  ASSERT_TRUE(t.isOk()) << t.status().message();
  EXPECT_TRUE(hasWarning(*t, "no layer costs measured at tp 2: the tp 1 costs scaled by 1/2"))
      << ::testing::PrintToString(t->warnings);
  // Filled-in costs are guesses (the advice leaves such layouts out), a mismatch is not.
  for (const std::string& w : t->warnings) {
    if (w.find("no layer costs measured at tp 2") == 0) {
      EXPECT_TRUE(isGuess(w)) << w;
    }
  }
  EXPECT_FALSE(isGuess("the calibration was measured on a dense model, predicting 4 experts"));

  Layout b4 = exact;
  b4.microBatchSize = 4;
  auto b = predictLayout(b4, c);
  ASSERT_TRUE(b.isOk());
  EXPECT_TRUE(hasWarning(*b, "micro-batch size 4 outside the measured sizes (1)"))
      << ::testing::PrintToString(b->warnings);
  // Between measured sizes it interpolates, silently.
  Calibration two = c;
  two.ops.push_back({"block", "forward", 8, 1, 8 * kMs, 8 * kMs, 1});
  auto inside = predictLayout(b4, two);
  ASSERT_TRUE(inside.isOk());
  EXPECT_FALSE(hasWarning(*inside, "micro-batch size"))
      << ::testing::PrintToString(inside->warnings);
}

TEST(Prediction, SaysWhenAMixtureOfExpertsIsPredictedFromOtherExpertSettings) {
  const Calibration dense = blockCalibration(1.0, 2.0);
  Layout moe;
  moe.model.experts = 4;
  moe.model.topK = 2;
  auto p = predictLayout(moe, dense);
  ASSERT_TRUE(p.isOk()) << p.status().message();
  EXPECT_TRUE(hasWarning(*p,
                         "the calibration was measured on a dense model, predicting 4 experts, "
                         "top-2, capacity factor 1, every 1 blocks"))
      << ::testing::PrintToString(p->warnings);
  Calibration same = dense;
  same.model = moe.model;
  auto q = predictLayout(moe, same);
  ASSERT_TRUE(q.isOk());
  EXPECT_FALSE(hasWarning(*q, "experts")) << ::testing::PrintToString(q->warnings);
  Calibration topOne = same;
  topOne.model.topK = 1;
  auto r = predictLayout(moe, topOne);
  ASSERT_TRUE(r.isOk());
  EXPECT_TRUE(hasWarning(*r, "measured on 4 experts, top-1"))
      << ::testing::PrintToString(r->warnings);
}

TEST(Prediction, OneFOneBHoldsFewerActivationsThanGPipe) {
  Layout l;
  l.pp = 2;
  l.microBatches = 8;
  l.schedule = ScheduleKind::kGPipe;
  auto g = predictLayout(l, blockCalibration(1.0, 2.0));
  l.schedule = ScheduleKind::kOneFOneB;
  auto o = predictLayout(l, blockCalibration(1.0, 2.0));
  ASSERT_TRUE(g.isOk() && o.isOk());
  const double perMb = activationBytesPerMicroBatch(l, 1, true, false);
  EXPECT_NEAR(g->activationBytes[0], 8 * perMb, 1.0);  // every micro-batch in flight
  EXPECT_NEAR(o->activationBytes[0], 2 * perMb, 1.0);  // p on stage 0
}

// A layer's cost is the median over the parts that measured it (a run that
// met a slow spell of the core does not set it), one that a single part
// measured that part's at the others' pace; every other cost and fit is the
// first part's.
TEST(CalibrationMerge, LayersAreTheMedianOfThePartsTheRestTheFirstOnes) {
  Calibration single = blockCalibration(2.0, 4.0, 1.0);
  single.name = "single";
  // Twice as slow as the median on both keys it shares: its own keys halved.
  Calibration wide = blockCalibration(5.0, 10.0, 7.0);  // the optimizer's again: ignored
  wide.ranksPerHost = 2;
  wide.ops.push_back({"block", "forward", 2, 1, 7.0 * kMs, 7.0 * kMs, 1});  // a new size
  wide.ops.push_back({"block", "forward", 1, 2, 2.4 * kMs, 2.4 * kMs, 1});  // a new tp
  wide.links.push_back({"dp", "same_host", "allreduce", 2, 10000, 0.5, 6, 8, 1 << 20});
  Calibration again = blockCalibration(2.5, 5.0, 8.0);
  again.links = wide.links;
  again.links[0].alphaNs = 99;  // a second fit of the same link: ignored
  again.links.push_back({"pp", "same_host", "p2p", 2, 0, 0.25, 4, 1024, 1024});
  const Calibration m = mergeCalibrations({single, wide, again});
  EXPECT_EQ(m.name, "single");
  EXPECT_EQ(m.ranksPerHost, 2);
  EXPECT_EQ(m.ops.size(), single.ops.size() + 2);
  EXPECT_DOUBLE_EQ(*m.opCostNs("block", "forward", 1, 1, false), 2.5 * kMs);   // of 2, 5, 2.5
  EXPECT_DOUBLE_EQ(*m.opCostNs("block", "backward", 1, 1, false), 5.0 * kMs);  // of 4, 10, 5
  EXPECT_DOUBLE_EQ(*m.perParameterNs("optimizer", "step", false), 1.0);        // the first
  EXPECT_DOUBLE_EQ(*m.opCostNs("block", "forward", 2, 1, false), 3.5 * kMs);
  EXPECT_DOUBLE_EQ(*m.opCostNs("block", "forward", 1, 2, false), 1.2 * kMs);
  // Between the two measured sizes: interpolated, not through the origin.
  EXPECT_DOUBLE_EQ(*m.opCostNs("block", "forward", 4, 1, false), 5.5 * kMs);
  ASSERT_EQ(m.links.size(), 2u);
  EXPECT_DOUBLE_EQ(m.linkFit("dp", "allreduce")->alphaNs, 10000);
  EXPECT_DOUBLE_EQ(m.linkFit("pp", "p2p")->betaNsPerByte, 0.25);
  EXPECT_TRUE(mergeCalibrations({}).ops.empty());
}

// A run's own costs win over the merge's medians; what it lacks stays merged.
TEST(CalibrationMerge, OwnCostsReplaceTheMergedOnes) {
  Calibration own = blockCalibration(3.0, 6.0);
  Calibration stored = blockCalibration(1.0, 2.0, 5.0);
  stored.ops.push_back({"block", "forward", 2, 1, 1.5 * kMs, 1.5 * kMs, 1});
  const Calibration merged = mergeCalibrations({own, stored, stored});
  EXPECT_DOUBLE_EQ(*merged.opCostNs("block", "forward", 1, 1, false), 1.0 * kMs);  // the median
  const Calibration kept = withOwnCosts(merged, own);
  EXPECT_DOUBLE_EQ(*kept.opCostNs("block", "forward", 1, 1, false), 3.0 * kMs);
  EXPECT_DOUBLE_EQ(*kept.opCostNs("block", "backward", 1, 1, false), 6.0 * kMs);
  EXPECT_DOUBLE_EQ(*kept.perParameterNs("optimizer", "step", false), 0.0);  // own's, first
  // A size only the stored ones measured: their median, as stored.
  EXPECT_DOUBLE_EQ(*kept.opCostNs("block", "forward", 2, 1, false), 1.5 * kMs);
  EXPECT_EQ(kept.ops.size(), merged.ops.size());
}

// calibrate's speed references scale a run's times, never its ratios or
// counts (the straggler factor, the shared-cores entries, contention's).
TEST(CalibrationScale, PredictScalesTimesAndLinkFitsButNotRatios) {
  Calibration c = blockCalibration(2.0, 4.0, 1.0);
  c.ops.push_back({"step", "straggler", 0, 1, 1.1, 1.05, 3});
  c.ops.push_back({"step", "other", 0, 1, 1.5, 1.5, 3});  // ns per parameter
  c.ops.push_back({"shared_cores", "straggler", 0, 1, 1.2, 1.2, 3});
  c.ops.push_back({"contention", "background", 0, 1, 0.5, 0.5, 1});
  c.links.push_back({"dp", "same_host", "allreduce", 2, 10000, 0.5, 6, 8, 1 << 20});
  const Calibration s = withTimesScaled(c, 0.8);
  ASSERT_EQ(s.ops.size(), c.ops.size());
  for (size_t i = 0; i < c.ops.size(); ++i) {
    const double f = isTimeCost(c.ops[i]) ? 0.8 : 1.0;
    EXPECT_DOUBLE_EQ(s.ops[i].wallNs, f * c.ops[i].wallNs) << c.ops[i].part << "/" << c.ops[i].op;
    EXPECT_DOUBLE_EQ(s.ops[i].cpuNs, f * c.ops[i].cpuNs) << c.ops[i].part << "/" << c.ops[i].op;
  }
  EXPECT_DOUBLE_EQ(*s.opCostNs("block", "forward", 1, 1, false), 0.8 * 2.0 * kMs);
  EXPECT_DOUBLE_EQ(*s.perParameterNs("step", "other", false), 0.8 * 1.5);
  EXPECT_DOUBLE_EQ(s.stragglerFactor(false), 1.1);
  EXPECT_DOUBLE_EQ(s.links[0].alphaNs, 8000);
  EXPECT_DOUBLE_EQ(s.links[0].betaNsPerByte, 0.4);
  EXPECT_FALSE(isTimeCost({"step", "straggler", 0, 1, 1, 1, 1}));
  EXPECT_FALSE(isTimeCost({"shared_cores", "tp_stretch_paid", 0, 1, 0.4, 0.4, 1}));
  EXPECT_FALSE(isTimeCost({"contention", "machine_drift", 0, 1, 0.1, 0.1, 1}));
  EXPECT_TRUE(isTimeCost({"optimizer", "step", 0, 1, 3, 3, 1}));
}

}  // namespace
}  // namespace bubblescope::layout
