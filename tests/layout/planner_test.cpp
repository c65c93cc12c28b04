// planLayouts(): candidates checked like `run`, the memory limit, ranking by
// predicted tokens/s, the seeds' reasons, and the error naming the constraint
// that removed every layout.
#include "engine/layout/planner.h"

#include <gtest/gtest.h>

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

TEST(Planner, RanksValidLayoutsByPredictedTokensPerSecond) {
  PlanRequest r;
  r.world = 2;
  r.model = *modelPreset("small");
  r.top = 100;
  auto plan = planLayouts(r, costs());
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  EXPECT_GT(plan->valid, 20);  // dp2 (ZeRO 0-3), tp2, pp2 (every schedule) x m x recompute
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

}  // namespace
}  // namespace bubblescope::layout
