// CorePlacement: which core each pipeline stage's rank runs on when the
// stages outnumber the cores, against a placement worked out by hand.
#include "planning/core_placement.h"

#include <gtest/gtest.h>

namespace bubblescope::layout {
namespace {

// GPipe, 4 stages, 4 micro-batches, every op 1 unit, free transfers: stage k
// runs its forwards over [k, k + 4); stage 3 its backwards right after, to
// 11; stage k < 3 its backwards over [11 - k, 15 - k) (the drain). On 2
// cores, by core_placement.h's rules:
//   t = 0  stage 0 wakes: core 0;   t = 1 stage 1: the idle core 1;
//   t = 2  stage 2, woken by stage 1: core 1 (no idle core);  t = 3 stage 3: core 1
//   t = 4  stage 0 blocks: core 0 takes core 1's longest resident, stage 1
//   t = 5  stage 1 blocks: core 0 takes stage 2;  t = 6 stage 2 blocks
//   t = 8  stage 2 wakes: its last core, 0, is idle; t = 9 stage 1 joins it
//          (its waker's), t = 10 stage 0 too
//   t = 11 stage 3 blocks: core 1 takes stage 2; t = 12 stage 2 blocks:
//          core 1 takes stage 1.
Simulation gpipeFourByFour(const Schedule& s) {
  auto sim = simulate(s, unitCosts(s));
  EXPECT_TRUE(sim.isOk()) << sim.status().message();
  return sim.isOk() ? *sim : Simulation{};
}

TEST(CorePlacement, PredictTheFirstStageKeepsItsCoreThroughTheFillTheOthersShareTheRest) {
  const Schedule s = gpipe(4, 4).value();
  const Simulation sim = gpipeFourByFour(s);
  ASSERT_EQ(sim.stages.size(), 4u);
  double lastBackward = 0;
  for (const OpInterval& op : sim.stages[3].timeline) {
    if (s.stageOps[3][op.opIndex].type == OpType::kBackward) lastBackward = op.end;
  }
  ASSERT_NEAR(lastBackward, 11.0, 1e-9);
  const CorePlacement placed(s, sim, 2);
  EXPECT_EQ(placed.sharersAt(0, 0.5), 1);
  EXPECT_EQ(placed.sharersAt(1, 1.5), 1);
  EXPECT_EQ(placed.sharersAt(1, 2.5), 2);
  EXPECT_EQ(placed.sharersAt(0, 3.5), 1);
  EXPECT_EQ(placed.sharersAt(3, 3.5), 3);
  // Idle balancing: the longest-resident rank moves to the freed core.
  EXPECT_EQ(placed.sharersAt(0, 4.5), 0);
  EXPECT_EQ(placed.sharersAt(1, 4.5), 1);
  EXPECT_EQ(placed.sharersAt(2, 4.5), 2);
  EXPECT_EQ(placed.sharersAt(2, 5.5), 1);
  EXPECT_EQ(placed.sharersAt(3, 5.5), 1);
  // The drain: the last stage alone, the others on the core they woke on.
  EXPECT_EQ(placed.sharersAt(3, 10.5), 1);
  EXPECT_EQ(placed.sharersAt(0, 10.5), 3);
  EXPECT_EQ(placed.sharersAt(2, 11.5), 1);
  EXPECT_EQ(placed.sharersAt(0, 11.5), 2);
  EXPECT_EQ(placed.sharersAt(0, 12.5), 1);
  EXPECT_EQ(placed.sharersAt(1, 12.5), 1);
  // The work done at a whole core's pace: a third of a unit a unit on a
  // core of three, half of one of a core of three paying half the stretch.
  EXPECT_NEAR(placed.inverseStretchIntegral(3, 4) - placed.inverseStretchIntegral(3, 3), 1.0 / 3,
              1e-12);
  EXPECT_NEAR(placed.inverseStretchIntegral(0, 4) - placed.inverseStretchIntegral(0, 0), 4.0,
              1e-12);
  const CorePlacement half(s, sim, 2, 0.5);
  EXPECT_NEAR(half.inverseStretchIntegral(3, 4) - half.inverseStretchIntegral(3, 3), 0.5, 1e-12);
}

TEST(CorePlacement, PredictACoreAStageShareNothing) {
  const Schedule s = gpipe(4, 4).value();
  const Simulation sim = gpipeFourByFour(s);
  const CorePlacement placed(s, sim, 4);
  for (int32_t k = 0; k < 4; ++k) {
    for (double t = 0.25; t < 16; t += 0.5) EXPECT_LE(placed.sharersAt(k, t), 1) << k << " " << t;
    EXPECT_NEAR(placed.inverseStretchIntegral(k, 15) - placed.inverseStretchIntegral(k, 0), 15.0,
                1e-12);
  }
  // A stage outside the timeline counts at pace 1.
  EXPECT_EQ(placed.sharersAt(7, 1.0), 0);
  EXPECT_DOUBLE_EQ(placed.inverseStretchIntegral(7, 3.0), 3.0);
}

}  // namespace
}  // namespace bubblescope::layout
