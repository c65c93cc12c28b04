// Expert parallelism in the prediction (planning/expert_parallel_cost.h):
// the parameters a rank holds, the all-to-alls of each pass costed from the
// calibration's ep fit, the experts' gradients reduced over their own group.
#include "planning/expert_parallel_cost.h"

#include <gtest/gtest.h>

#include "planning/formulas.h"
#include "planning/prediction.h"

namespace bubblescope::layout {
namespace {

constexpr double kMs = 1e6;

// tiny with every block a mixture of 4 experts, top-2 (samples/layouts/moe-ep2.jsonc).
ModelConfig moeTiny() {
  ModelConfig m = defaultLayoutModel();
  m.experts = 4;
  m.topK = 2;
  m.capacityFactor = 2.0;  // nothing dropped: every data all-to-all sends k·b·T rows
  m.moeEvery = 1;
  return m;
}

// Blocks 1 ms forward, 2 ms backward; embedding and head free; the optimizer
// `optNs` per parameter; the all-to-all and the all-reduce fitted.
Calibration moeCalibration(double optNs) {
  Calibration c;
  c.model = moeTiny();
  c.host = std::string(1, 'h');  // not = "h": GCC 12 warns falsely (-Wrestrict) on that here
  c.cores = 4;
  c.ranksPerHost = 2;
  for (const char* part : {"block", "embedding", "head"}) {
    const bool block = std::string(part) == "block";
    c.ops.push_back({part, "forward", 1, 1, block ? 1 * kMs : 0, block ? 1 * kMs : 0, 1});
    c.ops.push_back({part, "backward", 1, 1, block ? 2 * kMs : 0, block ? 2 * kMs : 0, 1});
  }
  c.ops.push_back({"optimizer", "step", 0, 1, optNs, optNs, 1});
  c.links.push_back({"ep", "same_host", "all_to_all", 2, 30000, 0.05, 10, 16, 1 << 16});
  c.links.push_back({"dp", "same_host", "allreduce", 2, 70000, 0.02, 10, 8, 1 << 20});
  return c;
}

double expertWeights(const ModelConfig& m) {  // one expert: fc + projection with biases
  const double c = m.hidden, f = m.mlpHidden();
  return c * f + f + f * c + c;
}

TEST(ExpertParallelCost, ARankHoldsTheSharedParametersAndItsShareOfTheExperts) {
  Layout l;
  l.model = moeTiny();
  l.dp = 2;
  l.ep = 2;
  const double experts = l.model.experts * expertWeights(l.model);  // of one block
  const ChunkParameters all = chunkParameters(l, 0, l.model.numLayers, true, true);
  EXPECT_EQ(all.moeBlocks, 2);
  EXPECT_DOUBLE_EQ(all.experts, 2 * experts / 2);
  EXPECT_DOUBLE_EQ(all.shared + 2 * experts, static_cast<double>(l.model.parameterCount()));
  // One block without the embedding or head; a dense model has no experts.
  const ChunkParameters one = chunkParameters(l, 1, 1, false, false);
  EXPECT_DOUBLE_EQ(one.shared + 2 * one.experts,
                   static_cast<double>(l.model.blockParameterCount(1)));
  Layout dense;
  const ChunkParameters d = chunkParameters(dense, 0, 2, true, true);
  EXPECT_EQ(d.experts, 0);
  EXPECT_DOUBLE_EQ(d.shared, static_cast<double>(dense.model.parameterCount()));
}

TEST(ExpertParallelCost, AllToAllsOfAPassFollowTheEngine) {
  Layout l;
  l.model = moeTiny();
  l.dp = 2;
  l.ep = 2;
  l.microBatchSize = 2;
  const double rows = 2.0 * 2 * l.model.seqLen;  // k · b · T
  const EpAllToAlls f = epForwardAllToAlls(l), b = epBackwardAllToAlls(l);
  EXPECT_EQ(f.calls, 3);
  EXPECT_DOUBLE_EQ(f.bytes, 4 * (2 * rows * l.model.hidden + l.model.experts));
  EXPECT_EQ(b.calls, 2);
  EXPECT_DOUBLE_EQ(b.bytes, 4 * 2 * rows * l.model.hidden);
  // Capacity below k·b·T: only E · capacity rows are kept and sent.
  l.model.capacityFactor = 0.5;
  const double kept = l.model.experts * l.model.expertCapacity(2 * l.model.seqLen);
  ASSERT_LT(kept, rows);
  EXPECT_DOUBLE_EQ(epBackwardAllToAlls(l).bytes, 4 * 2 * kept * l.model.hidden);
  l.ep = 1;
  EXPECT_EQ(epForwardAllToAlls(l).calls, 0);
  EXPECT_EQ(expertDataParallelSize(l), 2);
}

TEST(ExpertParallelPrediction, Ep2StepIsComputePlusAllToAllsPlusTheSharedReduction) {
  Layout l;
  l.model = moeTiny();
  l.dp = 2;
  l.ep = 2;
  l.microBatches = 2;
  const Calibration c = moeCalibration(10.0);
  auto p = predictLayout(l, c);
  ASSERT_TRUE(p.isOk()) << p.status().message();
  EXPECT_TRUE(p->warnings.empty()) << p->warnings.front();

  const double rowsBytes = 4.0 * 2 * l.model.seqLen * l.model.hidden;  // k·b·T rows of C fp32
  const double a2aFwd = 3 * 30000 + 0.05 * (2 * rowsBytes + 4 * l.model.experts);
  const double a2aBwd = 2 * 30000 + 0.05 * (2 * rowsBytes);
  const double experts = 2 * l.model.experts * expertWeights(l.model);  // both blocks
  const double shared = static_cast<double>(l.model.parameterCount()) - experts;
  // dp 2 = ep 2: the experts have no replica to reduce with; the shared
  // parameters are all-reduced over dp (one bucket); the experts' squared
  // norm (8 bytes) over ep, costed with the all-reduce fit.
  const double reduce = 70000 + 0.02 * 4 * shared;
  const double norm = 70000 + 0.02 * 8;
  const double optimizer = 10.0 * (shared + experts / 2);
  const double loss = 70000 + 0.02 * 8;  // the step's loss all-reduce over dp
  const double expected =
      2 * 2 * (1 + 2) * kMs + 2 * 2 * (a2aFwd + a2aBwd) + reduce + norm + optimizer + loss;
  EXPECT_NEAR(p->stepNs, expected, 1.0);
  EXPECT_NEAR(p->exposedCommNs.at("ep"), 2 * 2 * (a2aFwd + a2aBwd) + norm, 1.0);
  EXPECT_NEAR(p->exposedCommNs.at("dp"), reduce, 1.0);

  // ep 1 of the same model: no all-to-all, every gradient all-reduced, every
  // expert updated on each rank.
  Layout one = l;
  one.ep = 1;
  auto q = predictLayout(one, c);
  ASSERT_TRUE(q.isOk()) << q.status().message();
  EXPECT_EQ(q->exposedCommNs.count("ep"), 0u);
  EXPECT_NEAR(
      q->stepNs,
      2 * 2 * 3 * kMs + 70000 + 0.02 * 4 * (shared + experts) + 10.0 * (shared + experts) + loss,
      1.0);
  // A rank of ep 2 keeps half the experts' model states.
  EXPECT_NEAR(q->memoryBytes[0] - p->memoryBytes[0], 16.0 * experts / 2, 1.0);
}

TEST(ExpertParallelPrediction, ExpertsAreReducedOverTheirOwnGroupAndAMissingFitIsSaid) {
  Layout l;
  l.model = moeTiny();
  l.dp = 4;
  l.ep = 2;  // 2 expert-data-parallel replicas of each expert
  l.zeroStage = ZeroStage::kOptimizer;
  const Calibration c = moeCalibration(0.0);
  auto p = predictLayout(l, c);
  ASSERT_TRUE(p.isOk()) << p.status().message();
  const double experts = 2 * l.model.experts * expertWeights(l.model) / 2;  // this rank's
  const double shared = static_cast<double>(l.model.parameterCount()) - 2 * experts;
  // ZeRO 1 with no reduce-scatter / all-gather fit: half an all-reduce each,
  // over the shared parameters and, separately, this rank's experts.
  const double half = (70000 + 0.02 * 4 * shared + 70000 + 0.02 * 4 * experts) / 2;
  EXPECT_NEAR(p->exposedCommNs.at("zero"), 2 * half, 1.0);

  Calibration noAllToAll = c;
  noAllToAll.links.clear();
  auto q = predictLayout(l, noAllToAll);
  ASSERT_TRUE(q.isOk()) << q.status().message();
  bool said = false;
  for (const auto& w : q->warnings) said |= w == "no all_to_all time measured (dim ep): taken as 0";
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace bubblescope::layout
