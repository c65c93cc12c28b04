// planLayouts(): candidates checked like `run`, the memory limit, ranking by
// predicted tokens/s, the seeds' reasons, and the error naming the constraint
// that removed every layout.
#include "planning/planner.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <vector>

namespace bubblescope::layout {
namespace {

Calibration costs() {
  Calibration c;
  c.model = *modelPreset("small");
  for (const char* part : {"block", "embedding", "head"}) {
    const double f = std::string(part) == "block" ? 1e6 : 1e5;
    c.ops.push_back({part, "forward", 1, 1, f, f, 1});
    c.ops.push_back({part, "backward", 1, 1, 2 * f, 2 * f, 1});
  }
  c.ops.push_back({"optimizer", "step", 0, 1, 1.0, 1.0, 1});
  // Collectives cost something: data parallelism is not free.
  c.links.push_back({"dp", "same_host", "allreduce", 2, 50000, 0.01, 1, 1, 1});
  c.links.push_back({"pp", "same_host", "p2p", 2, 20000, 0.001, 1, 1, 1});
  c.links.push_back({"tp", "same_host", "allreduce", 2, 50000, 0.01, 1, 1, 1});
  return c;
}

TEST(Planner, ListsTheBestOfEachShapeAndCountsItsVariants) {
  PlanRequest r;
  r.world = 4;
  r.model = *modelPreset("small");
  r.top = 1000;
  auto shapes = planLayouts(r, costs());
  ASSERT_TRUE(shapes.isOk()) << shapes.status().message();
  r.everyVariant = true;
  auto all = planLayouts(r, costs());
  ASSERT_TRUE(all.isOk()) << all.status().message();
  ASSERT_EQ(static_cast<int32_t>(all->best.size()), all->fitting);
  // Every shape once, in the every-variant order of its best, which it is.
  std::vector<PlanCandidate> firsts;
  std::set<std::tuple<int32_t, int32_t, int32_t, int32_t>> seen;
  std::map<std::tuple<int32_t, int32_t, int32_t, int32_t>, int32_t> count;
  for (const PlanCandidate& c : all->best) {
    const auto key = std::make_tuple(c.layout.dp, c.layout.tp, c.layout.pp, c.layout.ep);
    ++count[key];
    if (seen.insert(key).second) firsts.push_back(c);
  }
  EXPECT_GT(seen.size(), 2u);  // dp4, dp2 x tp2, dp2 x pp2, tp4, pp4, ...
  EXPECT_EQ(shapes->shapes, static_cast<int32_t>(seen.size()));
  EXPECT_EQ(all->shapes, shapes->shapes);
  ASSERT_EQ(shapes->best.size(), firsts.size());
  int32_t listed = 0;
  for (size_t i = 0; i < firsts.size(); ++i) {
    const PlanCandidate& c = shapes->best[i];
    EXPECT_EQ(toJson(c.layout), toJson(firsts[i].layout)) << i;
    EXPECT_EQ(c.variants + 1,
              count[std::make_tuple(c.layout.dp, c.layout.tp, c.layout.pp, c.layout.ep)])
        << i;
    listed += c.variants + 1;
  }
  EXPECT_EQ(listed, shapes->fitting);
  for (const PlanCandidate& c : all->best) EXPECT_EQ(c.variants, 0);
  // --top cuts the shapes' list, best first.
  r.everyVariant = false;
  r.top = 2;
  auto two = planLayouts(r, costs());
  ASSERT_TRUE(two.isOk());
  ASSERT_EQ(two->best.size(), 2u);
  EXPECT_EQ(toJson(two->best[1].layout), toJson(firsts[1].layout));
}

TEST(Planner, RanksValidLayoutsByPredictedTokensPerSecond) {
  PlanRequest r;
  r.world = 2;
  r.model = *modelPreset("small");
  r.top = 1000;
  r.everyVariant = true;
  auto plan = planLayouts(r, costs());
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  // dp2: ZeRO 0 with each of 5 compressions and ZeRO 1-3, m in 5, recompute
  // off/on; tp2: 5 m x 2; pp2: 4 schedules x m in {2, 4, 8, 16} x 2.
  EXPECT_EQ(plan->valid, (5 + 3) * 5 * 2 + 5 * 2 + 4 * 4 * 2);
  EXPECT_EQ(plan->fitting, plan->valid);
  ASSERT_EQ(static_cast<int32_t>(plan->best.size()), plan->fitting);
  for (size_t i = 1; i < plan->best.size(); ++i) {
    EXPECT_GE(plan->best[i - 1].prediction.tokensPerSecond,
              plan->best[i].prediction.tokensPerSecond);
  }
  for (const PlanCandidate& c : plan->best) {
    EXPECT_EQ(c.layout.worldSize(), 2);
    EXPECT_TRUE(validate(c.layout).isOk());
    EXPECT_FALSE(c.rule.empty());
    EXPECT_FALSE(c.limit.empty());
  }
  // With compute dominating, plain data parallelism with the most
  // micro-batches and no recompute wins; its reason is the seeds' first rule.
  const PlanCandidate& best = plan->best.front();
  EXPECT_EQ(best.layout.dp, 2);
  EXPECT_FALSE(best.layout.recompute);
  EXPECT_EQ(best.rule.rfind("fits one device", 0) == 0 || best.rule.rfind("data parallel", 0) == 0,
            true)
      << best.rule;
}

TEST(Planner, TheMemoryLimitDropsLayoutsAndNamesItselfWhenNoneFit) {
  PlanRequest r;
  r.world = 2;
  r.model = *modelPreset("small");
  r.top = 100;
  r.everyVariant = true;
  auto all = planLayouts(r, costs());
  ASSERT_TRUE(all.isOk());
  double least = 1e300, most = 0;
  for (const auto& c : all->best) {
    least = std::min(least, c.peakMemoryBytes);
    most = std::max(most, c.peakMemoryBytes);
  }
  ASSERT_LT(least, most);
  r.memoryPerRankBytes = (least + most) / 2;
  auto some = planLayouts(r, costs());
  ASSERT_TRUE(some.isOk());
  EXPECT_LT(some->fitting, all->fitting);
  for (const auto& c : some->best) EXPECT_LE(c.peakMemoryBytes, *r.memoryPerRankBytes);
  r.memoryPerRankBytes = least / 2;
  auto none = planLayouts(r, costs());
  ASSERT_FALSE(none.isOk());
  EXPECT_NE(none.status().message().find("no layout fits the memory limit"), std::string::npos);
}

// "Limited by" names a cost that is there: a share that rounds to 0% of the
// step is no limit (issue 31: "exposed zero communication (0% of the
// step)"), and the dimension has its name, not the prediction's key.
TEST(Planner, TheLimitIsNeverAShareThatRoundsToNothing) {
  PlanRequest r;
  r.world = 2;
  r.model = *modelPreset("small");
  r.top = 1000;
  r.everyVariant = true;
  Calibration cheap = costs();
  for (LinkFit& f : cheap.links) {  // 1 ns a message: exposed, but nothing
    f.alphaNs = 1;
    f.betaNsPerByte = 1e-9;
  }
  auto plan = planLayouts(r, cheap);
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  int zero = 0;
  for (const PlanCandidate& c : plan->best) {
    EXPECT_EQ(c.limit.find("(0%"), std::string::npos) << c.limit;
    EXPECT_EQ(c.limit.find("exposed zero"), std::string::npos) << c.limit;
    if (c.layout.zeroStage != ZeroStage::kNone && c.layout.pp == 1) {
      ++zero;
      EXPECT_EQ(c.limit, "compute");
    }
  }
  EXPECT_GT(zero, 0);
  // A real cost keeps its name: ZeRO's gather over a slow link.
  Calibration slow = costs();
  for (LinkFit& f : slow.links) f.betaNsPerByte = 100;
  plan = planLayouts(r, slow);
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  bool named = false;
  for (const PlanCandidate& c : plan->best) {
    EXPECT_EQ(c.limit.find("(0%"), std::string::npos) << c.limit;
    named |= c.limit.rfind("exposed ZeRO communication (", 0) == 0;
  }
  EXPECT_TRUE(named);
}

// The first dp2 ZeRO 0 candidate of a plan of world 2 (none found: a
// default candidate, which the caller's expectations then fail on).
PlanCandidate bestDataParallel(const Calibration& c) {
  PlanRequest r;
  r.world = 2;
  r.model = *modelPreset("small");
  r.top = 1000;
  r.everyVariant = true;
  auto plan = planLayouts(r, c);
  EXPECT_TRUE(plan.isOk()) << plan.status().message();
  if (!plan.isOk()) return {};
  for (const PlanCandidate& cand : plan->best) {
    if (cand.layout.dp == 2 && cand.layout.zeroStage == ZeroStage::kNone) return cand;
  }
  ADD_FAILURE() << "no dp2 ZeRO 0 candidate";
  return {};
}

TEST(Planner, ASlowDataParallelLinkMakesPlanCompressTheGradientsAndSayWhy) {
  // costs(): 13 MB of small's gradients at 0.01 ns/B: compression's encoding
  // costs more than the 0.1 ms it could save.
  const PlanCandidate fast = bestDataParallel(costs());
  EXPECT_FALSE(fast.layout.gradCompression.compresses()) << fast.layout.gradCompression.toString();
  // At 100 ns/B (a 10 MB/s link) the fp32 all-reduce takes 1.3 s a step.
  Calibration slow = costs();
  for (LinkFit& f : slow.links) {
    if (f.dim == "dp") f.betaNsPerByte = 100;
  }
  const PlanCandidate best = bestDataParallel(slow);
  ASSERT_TRUE(best.layout.gradCompression.compresses());
  EXPECT_TRUE(validate(best.layout).isOk());
  const GradReductionCost& g = best.prediction.gradReduction;
  EXPECT_GT(g.compressionRatio(), 1.5);
  EXPECT_GT(g.codecNs, 0.0);
  EXPECT_NE(best.rule.find(best.layout.gradCompression.toString() + " gradients: "),
            std::string::npos)
      << best.rule;
  EXPECT_NE(best.rule.find("x fewer dp bytes"), std::string::npos) << best.rule;
}

TEST(Planner, ASlowInterNodeLinkMakesPlanPreferTheHierarchicalAllReduceAndSayWhy) {
  PlanRequest r;
  r.world = 4;
  r.model = *modelPreset("small");
  r.top = 1000;
  r.everyVariant = true;
  r.compressions = {GradCompressionSpec{}};
  r.ranksPerNode = 2;  // two emulated nodes of two ranks behind a 1 Gb/s link
  r.interNodeGbps = 1;
  auto plan = planLayouts(r, costs());
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  const PlanCandidate* best = nullptr;
  const PlanCandidate* flat = nullptr;
  for (const PlanCandidate& c : plan->best) {
    EXPECT_EQ(c.layout.ranksPerNode, 2);  // every candidate runs on the same nodes
    EXPECT_TRUE(validate(c.layout).isOk()) << validate(c.layout).message();
    if (c.layout.dp != 4) continue;
    if (best == nullptr) best = &c;
    if (flat == nullptr && c.layout.allReduce == AllReduceAlgorithm::kFlat) flat = &c;
  }
  ASSERT_NE(best, nullptr);
  ASSERT_NE(flat, nullptr);
  EXPECT_EQ(best->layout.allReduce, AllReduceAlgorithm::kHierarchical);
  EXPECT_NE(best->rule.find("hierarchical all-reduce (reduce inside each node first)"),
            std::string::npos)
      << best->rule;
  // The paced link at 1 byte per 8 ns: the flat ring's 6 steps of n/4 bytes
  // cross it, the hierarchical all-reduce's 2 steps of n/4 (a half over 2
  // nodes), so at least 4 · n/4 · 8 ns apart.
  const double bytes = 4.0 * static_cast<double>(r.model.parameterCount());
  const GradReductionCost& h = best->prediction.gradReduction;
  EXPECT_DOUBLE_EQ(h.interNodeBytes, bytes / 2);
  EXPECT_GE(flat->prediction.gradReduction.commNs - h.commNs, 4 * (bytes / 4) * 8 * (1 - 1e-9));
  // Without the link (one machine, no nodes) no hierarchical candidate.
  PlanRequest one = r;
  one.ranksPerNode = 0;
  one.interNodeGbps = 0;
  auto local = planLayouts(one, costs());
  ASSERT_TRUE(local.isOk());
  for (const PlanCandidate& c : local->best) {
    EXPECT_EQ(c.layout.allReduce, AllReduceAlgorithm::kFlat);
  }
}

// The world is range-checked: 2147483647 ranks used to overflow the tp loop,
// wrap through 0 and divide by zero (SIGFPE after 28 s).
TEST(Planner, AWorldOutsideItsRangeIsOneMessage) {
  PlanRequest r;
  r.model = modelPreset("tiny").value();
  const Calibration c = flopsCalibration(r.model, kFlopsEstimatePerSecond);
  for (int32_t world : {0, -3, kMaxPlanWorld + 1, std::numeric_limits<int32_t>::max()}) {
    r.world = world;
    EXPECT_EQ(planLayouts(r, c).status().message(),
              "--world: " + std::to_string(world) + " is outside the allowed range 1 to 1048576");
  }
}

TEST(Planner, ImpossibleDegreesAreSkippedByTheLayoutRules) {
  PlanRequest r;
  r.world = 7;  // tiny: 2 layers, 4 heads: tp 7 and pp 7 are both impossible, dp 7 is fine
  r.model = *modelPreset("tiny");
  auto ok = planLayouts(r, flopsCalibration(r.model, 1e10));
  ASSERT_TRUE(ok.isOk()) << ok.status().message();
  for (const auto& c : ok->best) EXPECT_EQ(c.layout.dp, 7);
  r.world = 0;
  EXPECT_FALSE(planLayouts(r, flopsCalibration(r.model, 1e10)).isOk());
}

TEST(Planner, NoValidLayoutNamesTheLayoutRuleThatRemovedThemAll) {
  PlanRequest r;
  r.world = 2;
  r.model = *modelPreset("tiny");
  r.model.numHeads = 3;  // C 32 is not divisible by 3 heads: no layout of this model can run
  auto none = planLayouts(r, flopsCalibration(r.model, 1e10));
  ASSERT_FALSE(none.isOk());
  const std::string message = none.status().message();
  EXPECT_NE(message.find("no valid layout of world 2 for this model: the layout rules removed "
                         "them all (invalid layout: "),
            std::string::npos)
      << message;
  // The first problem met is validate()'s own sentence for that layout.
  Layout first;
  first.model = r.model;
  first.dp = 2;
  EXPECT_NE(message.find(validate(first).message()), std::string::npos) << message;
}

// A MoE model: plan also tries expert parallelism (ep dividing dp and the
// experts), keeps only what `run` accepts, and an ep layout holds less than
// the same layout without it (its rank keeps 1/ep of the experts).
TEST(Planner, AMoeModelGetsExpertParallelCandidatesWithTheirReason) {
  ModelConfig moe = *modelPreset("tiny");
  moe.experts = 4;
  moe.topK = 2;
  moe.capacityFactor = 2.0;
  moe.moeEvery = 1;
  Calibration c = costs();
  c.model = moe;
  c.links.push_back({"ep", "same_host", "all_to_all", 2, 30000, 0.05, 10, 16, 1 << 16});
  PlanRequest r;
  r.world = 4;
  r.model = moe;
  r.top = 100000;
  r.everyVariant = true;
  auto plan = planLayouts(r, c);
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  int32_t ep2 = 0, ep4 = 0;
  for (const PlanCandidate& cand : plan->best) {
    ASSERT_TRUE(validate(cand.layout).isOk());
    if (cand.layout.ep == 1) continue;
    ep2 += cand.layout.ep == 2;
    ep4 += cand.layout.ep == 4;
    EXPECT_EQ(cand.layout.dp % cand.layout.ep, 0);
    EXPECT_NE(cand.rule.find("expert parallel " + std::to_string(cand.layout.ep) + ": 1/"),
              std::string::npos)
        << cand.rule;
    Layout dense = cand.layout;
    dense.ep = 1;
    const auto same = std::find_if(plan->best.begin(), plan->best.end(),
                                   [&](const PlanCandidate& o) { return o.layout == dense; });
    ASSERT_NE(same, plan->best.end());
    EXPECT_LT(cand.peakMemoryBytes, same->peakMemoryBytes);
  }
  EXPECT_GT(ep2, 0);
  EXPECT_GT(ep4, 0);
  // A dense model gets none.
  r.model = *modelPreset("tiny");
  auto dense = planLayouts(r, costs());
  ASSERT_TRUE(dense.isOk());
  for (const PlanCandidate& cand : dense->best) EXPECT_EQ(cand.layout.ep, 1);
}

}  // namespace
}  // namespace bubblescope::layout
