// simulateTimeShared(): a pipeline's stages time-sharing a host's cores
// (processor sharing), against timelines worked out by hand.
#include "planning/time_sharing.h"

#include <gtest/gtest.h>

#include <limits>

namespace bubblescope::layout {
namespace {

// Every compute op `work` long at a whole core's pace (forward f, backward
// b), everything else free; receives are the simulator's waits.
struct Costs {
  OpCosts fixed, work;
};
Costs costsOf(const Schedule& s, double f, double b) {
  Costs c;
  c.fixed.resize(s.stages);
  c.work.resize(s.stages);
  for (int32_t k = 0; k < s.stages; ++k) {
    for (const Op& op : s.stageOps[k]) {
      const bool receive = op.type == OpType::kRecvActivation || op.type == OpType::kRecvGrad;
      c.fixed[k].push_back(receive ? -1.0 : 0.0);
      c.work[k].push_back(!isCompute(op.type) ? 0.0 : op.type == OpType::kForward ? f : b);
    }
  }
  return c;
}

// Every op's duration with its work stretched by the same s: fixed + s x work.
OpCosts uniformlyStretched(const Costs& c, double s) {
  OpCosts d = c.fixed;
  for (size_t k = 0; k < d.size(); ++k) {
    for (size_t i = 0; i < d[k].size(); ++i) {
      if (d[k][i] >= 0) d[k][i] += s * c.work[k][i];
    }
  }
  return d;
}

CostModel freeBase() {
  CostModel base;
  base.forward = base.backwardInput = 0;
  return base;
}

// The fixed point stops when no op's stretch moves by more than 1e-6: on
// ops of work <= 2 that moves a makespan of n ops by under n x 2e-6 (with
// the halving steps' remainder, twice that); 1e-4 covers 8 ops.
constexpr double kTimelineTolerance = 1e-4;

TEST(TimeSharing, PredictOpsThatNeverOverlapRunAtAWholeCoresPace) {
  // GPipe, 2 stages, 1 micro-batch: F0, F1, B1, B0 one after another, each
  // stage's 2 ranks alone on the 2 cores. Uniform stretching by 4/2 would
  // take 12.
  const Schedule s = gpipe(2, 1).value();
  const Costs c = costsOf(s, 1.0, 2.0);
  auto r = simulateTimeShared(s, freeBase(), c.fixed, c.work, {2, 2.0, 0.0});
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_TRUE(r->converged);
  EXPECT_NEAR(r->simulation.makespan, 6.0, kTimelineTolerance);
}

TEST(TimeSharing, PredictOverlappingOpsShareTheCores) {
  // GPipe, 2 stages, 2 micro-batches, F = B = 1, 2 ranks a stage, 2 cores:
  // stage 0's F0 alone [0,1]; its F1 beside stage 1's F0, 4 ranks on 2
  // cores, [1,3]; stage 1's F1 alone [3,4] and its first backward [4,5];
  // its second beside stage 0's first [5,7]; stage 0's last alone [7,8].
  // Uniform stretching: 12.
  const Schedule s = gpipe(2, 2).value();
  const Costs c = costsOf(s, 1.0, 1.0);
  auto r = simulateTimeShared(s, freeBase(), c.fixed, c.work, {2, 2.0, 0.0});
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_TRUE(r->converged);
  EXPECT_NEAR(r->simulation.makespan, 8.0, kTimelineTolerance);
  const auto uniform = simulate(s, freeBase(), uniformlyStretched(c, 2));
  ASSERT_TRUE(uniform.isOk());
  EXPECT_NEAR(uniform->makespan, 12.0, 1e-12);
}

TEST(TimeSharing, PredictASingleStageIsStretchedUniformly) {
  // One stage of 4 ranks on 2 cores: every op beside the other three ranks.
  const Schedule s = gpipe(1, 3).value();
  const Costs c = costsOf(s, 1.0, 2.0);
  auto r = simulateTimeShared(s, freeBase(), c.fixed, c.work, {2, 4.0, 0.0});
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_NEAR(r->simulation.makespan, 2.0 * 3 * (1.0 + 2.0), kTimelineTolerance);
}

TEST(TimeSharing, PredictTheBackgroundCountsAmongTheRunnable) {
  // One rank a stage, 2 cores, 2 busy threads of other work: each op alone
  // with them, (1 + 2) / 2 = 1.5; fixed costs are not stretched.
  const Schedule s = gpipe(2, 1).value();
  Costs c = costsOf(s, 1.0, 2.0);
  for (int32_t k = 0; k < s.stages; ++k)
    for (size_t i = 0; i < c.fixed[k].size(); ++i)
      if (isCompute(s.stageOps[k][i].type)) c.fixed[k][i] = 0.5;
  auto r = simulateTimeShared(s, freeBase(), c.fixed, c.work, {2, 1.0, 2.0});
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_NEAR(r->simulation.makespan, 1.5 * 6.0 + 4 * 0.5, kTimelineTolerance);
}

TEST(TimeSharing, PredictWithCoresToSpareIsThePlainSimulation) {
  const Schedule s = oneFOneB(4, 8).value();
  const Costs c = costsOf(s, 1.0, 2.0);
  auto r = simulateTimeShared(s, freeBase(), c.fixed, c.work, {8, 2.0, 0.0});
  ASSERT_TRUE(r.isOk()) << r.status().message();
  const OpCosts plain = uniformlyStretched(c, 1);
  auto expected = simulate(s, freeBase(), plain);
  ASSERT_TRUE(expected.isOk());
  EXPECT_DOUBLE_EQ(r->simulation.makespan, expected->makespan);
  EXPECT_EQ(r->durations, plain);
}

TEST(TimeSharing, PredictA1F1BStepIsTheHostsWorkWhenItNeverIdles) {
  // 1F1B, 2 stages of 2 ranks on 2 cores, F = 1, B = 2, no transfer time:
  // one stage alone runs at a whole core's pace, two at half each, so the
  // host does one unit of a stage's work per unit of time whichever run,
  // and some stage always runs: the step is the work of both, 2 x 8 x 3.
  // Every op stretched by 4 / 2 would take 2 x (24 + the bubble's 3) = 54.
  const Schedule s = oneFOneB(2, 8).value();
  const Costs c = costsOf(s, 1.0, 2.0);
  auto r = simulateTimeShared(s, freeBase(), c.fixed, c.work, {2, 2.0, 0.0});
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_TRUE(r->converged);
  EXPECT_NEAR(r->simulation.makespan, 48.0, 16 * kTimelineTolerance);
}

TEST(TimeSharing, PredictAnOpPaysItsShareOfTheStretch) {
  // One stage of 4 ranks on 2 cores (s = 2) paying a quarter of s - 1: every
  // op stretched by 1.25; paying none, the plain simulation.
  const Schedule s = gpipe(1, 3).value();
  const Costs c = costsOf(s, 1.0, 2.0);
  auto quarter = simulateTimeShared(s, freeBase(), c.fixed, c.work, {2, 4.0, 0.0, 0.25});
  ASSERT_TRUE(quarter.isOk()) << quarter.status().message();
  EXPECT_NEAR(quarter->simulation.makespan, 1.25 * 3 * (1.0 + 2.0), kTimelineTolerance);
  auto none = simulateTimeShared(s, freeBase(), c.fixed, c.work, {2, 4.0, 0.0, 0.0});
  ASSERT_TRUE(none.isOk());
  EXPECT_EQ(none->durations, uniformlyStretched(c, 1));
  // A 2-stage GPipe whose every op pays half: F0 alone [0,1]; F1 beside
  // stage 1's F0 at 1 + (2 - 1) / 2 = 1.5, [1,2.5]; stage 1's F1 alone
  // [2.5,3.5], its first backward [3.5,4.5], its second beside stage 0's
  // first [4.5,6]; stage 0's last alone [6,7].
  const Schedule g = gpipe(2, 2).value();
  const Costs gc = costsOf(g, 1.0, 1.0);
  auto half = simulateTimeShared(g, freeBase(), gc.fixed, gc.work, {2, 2.0, 0.0, 0.5});
  ASSERT_TRUE(half.isOk()) << half.status().message();
  EXPECT_NEAR(half->simulation.makespan, 7.0, kTimelineTolerance);
  for (double bad : {-0.1, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
    auto r = simulateTimeShared(g, freeBase(), gc.fixed, gc.work, {2, 2.0, 0.0, bad});
    ASSERT_FALSE(r.isOk()) << bad;
    EXPECT_NE(r.status().message().find("share of the stretch paid must be from 0 to 1"),
              std::string::npos)
        << r.status().message();
  }
}

TEST(TimeSharing, PredictTheMeanStretchIsTheWorksStretchedTimeOverItsWork) {
  // The 2-stage GPipe of PredictOverlappingOpsShareTheCores: 8 ops of 1
  // unit of work, nothing fixed; the four that run alone take 1, the four
  // that overlap 2 each: (4 + 8) / 8 = 1.5.
  const Schedule s = gpipe(2, 2).value();
  const Costs c = costsOf(s, 1.0, 1.0);
  auto r = simulateTimeShared(s, freeBase(), c.fixed, c.work, {2, 2.0, 0.0});
  ASSERT_TRUE(r.isOk());
  EXPECT_NEAR(meanStretch(r->durations, c.fixed, c.work), (4 * 1.0 + 4 * 2.0) / 8.0, 1e-4);
  EXPECT_DOUBLE_EQ(meanStretch(uniformlyStretched(c, 3), c.fixed, c.work), 3.0);
  const Costs none = costsOf(s, 0.0, 0.0);
  EXPECT_DOUBLE_EQ(meanStretch(none.fixed, none.fixed, none.work), 1.0);
}

// GPipe, 4 stages of one rank, 4 micro-batches of 1 unit of work a pass, on
// 2 cores. Placed (core_placement.h) stage 0 keeps core 0 through the fill
// and its four forwards take 1 each, while stages 2 and 3 join stage 1 on
// core 1 and stretch; shared evenly stage 0's forwards stretch as soon as
// three ranks run.
TEST(TimeSharing, PredictPlacedTheFirstStageRunsItsForwardsAtAWholeCoresPace) {
  const Schedule s = gpipe(4, 4).value();
  const Costs c = costsOf(s, 1.0, 1.0);
  TimeSharing placed{2, 1.0, 0.0};
  placed.model = CoreModel::kPlacement;
  auto r = simulateTimeShared(s, freeBase(), c.fixed, c.work, placed);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  auto even = simulateTimeShared(s, freeBase(), c.fixed, c.work, {2, 1.0, 0.0});
  ASSERT_TRUE(even.isOk()) << even.status().message();
  double stageThreeForwards = 0, evenStageZeroForwards = 0;
  for (size_t i = 0; i < s.stageOps[0].size(); ++i) {
    if (s.stageOps[0][i].type != OpType::kForward) continue;
    EXPECT_NEAR(r->durations[0][i], 1.0, kTimelineTolerance) << i;
    evenStageZeroForwards += even->durations[0][i];
  }
  for (size_t i = 0; i < s.stageOps[3].size(); ++i) {
    if (s.stageOps[3][i].type == OpType::kForward) stageThreeForwards += r->durations[3][i];
  }
  // Placed by hand: stage 1 alone on core 1 over [1, 2); stage 2 joins it
  // at 2 (F1 of stage 1 and F0 of stage 2 take [2, 4) at half a core); at 4
  // stage 0 blocks and core 0 takes stage 1, stage 3 wakes onto stage 2's
  // core (F0 over [4, 6) at half a core); at 6 stage 1 blocks and core 0
  // takes stage 2: stage 3's F1-F3 run alone, 1 each. 2 + 3 = 5.
  EXPECT_NEAR(stageThreeForwards, 5.0, kTimelineTolerance);
  // Shared evenly, three ranks run from t = 2 on: stage 0's F2 and F3
  // stretch, over the 4 they take at a whole core's pace.
  EXPECT_GT(evenStageZeroForwards, 4.0 + kTimelineTolerance);
  // One rank a stage and no background only.
  placed.ranksPerStage = 2;
  auto two = simulateTimeShared(s, freeBase(), c.fixed, c.work, placed);
  ASSERT_FALSE(two.isOk());
  EXPECT_NE(two.status().message().find("one rank a stage and no background"), std::string::npos)
      << two.status().message();
}

TEST(TimeSharing, PredictRejectsCostsOfAnotherShape) {
  const Schedule s = gpipe(2, 1).value();
  Costs c = costsOf(s, 1.0, 1.0);
  c.work.pop_back();
  auto r = simulateTimeShared(s, freeBase(), c.fixed, c.work, {2, 2.0, 0.0});
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("work costs has 1 stages"), std::string::npos)
      << r.status().message();
  c = costsOf(s, 1.0, 1.0);
  c.work[0][0] = std::numeric_limits<double>::quiet_NaN();
  r = simulateTimeShared(s, freeBase(), c.fixed, c.work, {2, 2.0, 0.0});
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("stage 0 op 0"), std::string::npos);
}

}  // namespace
}  // namespace bubblescope::layout
