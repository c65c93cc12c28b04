// simulate(): timing under a cost model and the checker's error messages.
#include "planning/simulator.h"

#include <gtest/gtest.h>

namespace bubblescope::layout {
namespace {

Op op(OpType type, int32_t mb = 0, int32_t peer = -1, int32_t chunk = 0) {
  return {type, mb, chunk, peer};
}

// Two stages, one micro-batch, written by hand.
Schedule twoStages(std::vector<Op> stage0, std::vector<Op> stage1) {
  Schedule s;
  s.kind = ScheduleKind::kOneFOneB;
  s.stages = 2;
  s.microBatches = 1;
  s.chunks = 1;
  s.stageOps = {std::move(stage0), std::move(stage1)};
  return s;
}

// t_F 1, t_B 2, t_W 0.5, a transfer 0.25, the gradient sync 0.1 and the
// optimizer step 0.2.
CostModel transferCosts() {
  CostModel costs;
  costs.forward = 1.0;
  costs.backwardInput = 2.0;
  costs.backwardWeight = 0.5;
  costs.comm = 0.25;
  costs.gradSync = 0.1;
  costs.optimizer = 0.2;
  return costs;
}

TEST(Simulator, TimesACommunicationCostOnBothTransfers) {
  const Result<Simulation> sim = simulate(oneFOneB(2, 1).value(), transferCosts());
  ASSERT_TRUE(sim.isOk()) << sim.status().message();
  // F0 on stage 0 [0,1], comm to 1.25, F0 on stage 1 [1.25,2.25], B [2.25,4.75],
  // comm to 5.0, B on stage 0 [5.0,7.5], then sync 0.1 and optimizer 0.2.
  // Stage 1 synced at 4.85 and waits for stage 0 at the gradient norm: both
  // run their optimizer step from 7.6.
  EXPECT_DOUBLE_EQ(sim->stages[0].finish, 7.8);
  EXPECT_DOUBLE_EQ(sim->stages[1].finish, 7.8);
  EXPECT_DOUBLE_EQ(sim->stages[1].timeline.back().start, 7.6);
  EXPECT_DOUBLE_EQ(sim->stages[1].idle, 7.8 - (1.0 + 2.5 + 0.3));
  EXPECT_DOUBLE_EQ(sim->makespan, 7.8);
  EXPECT_DOUBLE_EQ(sim->stages[0].busy, 1.0 + 2.5 + 0.3);
  EXPECT_DOUBLE_EQ(sim->stages[0].idle, 7.8 - 3.8);
  EXPECT_DOUBLE_EQ(sim->stages[0].waitRecv, 5.0 - 1.0);
  EXPECT_DOUBLE_EQ(sim->stages[1].waitRecv, 1.25);
  EXPECT_DOUBLE_EQ(sim->bubbleFraction, (4.0 + (7.8 - 3.8)) / (2 * 7.8));
  EXPECT_EQ(sim->stages[0].peakInFlight, 1);
}

// The executor all-reduces the clipping norm over the pipeline before any
// stage updates: a stage whose optimizer step is long but that finished its
// backwards first still starts it only when the last stage arrives.
TEST(Simulator, StagesMeetAtTheGradientNormBeforeTheirOptimizerSteps) {
  const Schedule s = oneFOneB(2, 1).value();
  ASSERT_EQ(s.stageOps[1].back().type, OpType::kOptimizerStep);
  OpCosts o(2);
  o[1].assign(s.stageOps[1].size(), -1.0);
  o[1].back() = 5.0;
  const Result<Simulation> sim = simulate(s, transferCosts(), o);
  ASSERT_TRUE(sim.isOk()) << sim.status().message();
  // Stage 1 reaches it at 4.85, stage 0 at 7.6 (as above): 7.6 + 5.
  EXPECT_DOUBLE_EQ(sim->stages[1].timeline.back().start, 7.6);
  EXPECT_DOUBLE_EQ(sim->stages[1].finish, 12.6);
  EXPECT_DOUBLE_EQ(sim->stages[0].finish, 7.8);
  EXPECT_DOUBLE_EQ(sim->makespan, 12.6);
  EXPECT_DOUBLE_EQ(sim->stages[1].waitRecv, 1.25);  // the meeting is no receive
}

// A receive that had to wait goes on t_wake after its message arrived; one
// that finds its message there pays nothing.
TEST(Simulator, ABlockedReceiveWakesUpLaterAFoundMessageCostsNothing) {
  CostModel costs = transferCosts();
  costs.recvWake = 0.5;
  const Result<Simulation> one = simulate(oneFOneB(2, 1).value(), costs);
  ASSERT_TRUE(one.isOk()) << one.status().message();
  // As above, each of the two receives blocked: stage 1's activation at
  // 1.25 + 0.5, F [1.75, 2.75], B [2.75, 5.25]; stage 0's gradient at 5.5 +
  // 0.5, B [6, 8.5], sync to 8.6, both optimizer steps [8.6, 8.8].
  EXPECT_DOUBLE_EQ(one->stages[1].waitRecv, 1.75);
  EXPECT_DOUBLE_EQ(one->stages[0].waitRecv, 6.0 - 1.0);
  EXPECT_DOUBLE_EQ(one->makespan, 8.8);

  // Two micro-batches: stage 1's second activation arrived at 2.25, long
  // before its first backward ends, so its receive takes no time.
  const Schedule two = oneFOneB(2, 2).value();
  const Result<Simulation> sim = simulate(two, costs);
  ASSERT_TRUE(sim.isOk()) << sim.status().message();
  int32_t activations = 0;
  for (const OpInterval& t : sim->stages[1].timeline) {
    if (two.stageOps[1][t.opIndex].type != OpType::kRecvActivation) continue;
    EXPECT_DOUBLE_EQ(t.end - t.start, activations == 0 ? 1.75 : 0.0);
    ++activations;
  }
  EXPECT_EQ(activations, 2);
}

TEST(Simulator, ChunkOpsCostAFractionOfTheStage) {
  CostModel costs;  // t_F = t_B = 1
  const Result<Simulation> sim = simulate(interleaved(1, 2, 2).value(), costs);
  ASSERT_TRUE(sim.isOk()) << sim.status().message();
  // One stage, two chunks, two micro-batches: 4 chunk forwards and 4 chunk
  // backwards at 0.5 each, no idle time.
  EXPECT_DOUBLE_EQ(sim->makespan, 4.0);
  EXPECT_DOUBLE_EQ(sim->bubbleFraction, 0.0);
}

TEST(Simulator, DetectsADeadlockAndNamesTheStagesAndOps) {
  // Both stages wait for the other first.
  const Schedule s = twoStages({op(OpType::kRecvGrad, 0, 1), op(OpType::kForward),
                                op(OpType::kSendActivation, 0, 1), op(OpType::kBackward)},
                               {op(OpType::kRecvActivation, 0, 0), op(OpType::kForward),
                                op(OpType::kBackward), op(OpType::kSendGrad, 0, 0)});
  const Result<Simulation> sim = simulate(s, CostModel{});
  ASSERT_FALSE(sim.isOk());
  EXPECT_EQ(sim.status().message(),
            "deadlock: stage 0 waits at op 0 RecvGrad(mb 0, chunk 0 <- stage 1); "
            "stage 1 waits at op 0 RecvActivation(mb 0, chunk 0 <- stage 0)");
}

TEST(Simulator, RejectsAForwardBeforeItsActivationArrived) {
  const Schedule s = twoStages({op(OpType::kForward), op(OpType::kSendActivation, 0, 1),
                                op(OpType::kRecvGrad, 0, 1), op(OpType::kBackward)},
                               {op(OpType::kForward), op(OpType::kRecvActivation, 0, 0),
                                op(OpType::kBackward), op(OpType::kSendGrad, 0, 0)});
  EXPECT_EQ(simulate(s, CostModel{}).status().message(),
            "stage 1 op 0 Forward(mb 0, chunk 0): runs before its input activation was "
            "received");
}

TEST(Simulator, RejectsAWrongPeer) {
  Schedule s = oneFOneB(3, 1).value();
  s.stageOps[0][1].peer = 2;  // SendActivation of stage 0 aimed at stage 2
  EXPECT_EQ(simulate(s, CostModel{}).status().message(),
            "stage 0 op 1 SendActivation(mb 0, chunk 0 -> stage 2): names peer 2 but the "
            "next virtual stage is on stage 1");
}

TEST(Simulator, RejectsAMessageNobodyReceives) {
  const Schedule s = twoStages(
      {op(OpType::kForward), op(OpType::kSendActivation, 0, 1), op(OpType::kSendActivation, 0, 1)},
      {op(OpType::kRecvActivation, 0, 0), op(OpType::kForward)});
  EXPECT_EQ(simulate(s, CostModel{}).status().message(),
            "stage 0 op 2 SendActivation(mb 0, chunk 0 -> stage 1): sends a second time");
  const Schedule lost =
      twoStages({op(OpType::kForward), op(OpType::kSendActivation, 0, 1)}, {op(OpType::kForward)});
  EXPECT_EQ(simulate(lost, CostModel{}).status().message(),
            "stage 1 op 0 Forward(mb 0, chunk 0): runs before its input activation was "
            "received");
}

TEST(Simulator, RejectsAnUnreceivedSendAtTheEnd) {
  Schedule s = oneFOneB(2, 1).value();
  // Drop stage 0's RecvGrad and Backward: stage 1's SendGrad is never received.
  auto& ops = s.stageOps[0];
  ops.erase(ops.begin() + 2, ops.begin() + 4);
  ops.resize(2);
  EXPECT_EQ(simulate(s, CostModel{}).status().message(),
            "stage 1 op 3 SendGrad(mb 0, chunk 0 -> stage 0) is never received");
}

TEST(Simulator, RejectsWeightGradientBeforeInputGradientAndMissingWork) {
  Schedule s = zeroBubbleH1(1, 1).value();
  // [F, B, W, sync, step] -> [F, W, B, sync, step]
  std::swap(s.stageOps[0][1], s.stageOps[0][2]);
  EXPECT_EQ(simulate(s, CostModel{}).status().message(),
            "stage 0 op 1 BackwardWeight(mb 0, chunk 0): runs before its BackwardInput");

  Schedule early = zeroBubbleH1(1, 1).value();
  early.stageOps[0].erase(early.stageOps[0].begin() + 2);  // no W before the sync
  EXPECT_EQ(simulate(early, CostModel{}).status().message(),
            "stage 0 op 2 AllReduceGrads: runs before every backward of the stage finished");

  Schedule missing = gpipe(1, 2).value();
  missing.stageOps[0] = {op(OpType::kForward, 0), op(OpType::kBackward, 0)};
  EXPECT_EQ(simulate(missing, CostModel{}).status().message(),
            "stage 0 never runs Forward for mb 1, chunk 0");
}

// A list that replays but is not a training step (checkOpList, schedule.h).
TEST(Simulator, RejectsAListWithoutItsOptimizerStep) {
  Schedule s = gpipe(1, 2).value();
  s.stageOps[0].pop_back();  // [..., AllReduceGrads, OptimizerStep] -> no OptimizerStep
  EXPECT_EQ(simulate(s, CostModel{}).status().message(),
            "stage 0's op list must hold one gradient collective after its last backward and "
            "one OptimizerStep after that");
}

TEST(Simulator, PeakInFlightCountsForwardsNotYetBackward) {
  const Result<Simulation> g = simulate(gpipe(4, 8).value(), CostModel{});
  const Result<Simulation> f = simulate(oneFOneB(4, 8).value(), CostModel{});
  ASSERT_TRUE(g.isOk() && f.isOk());
  for (int32_t k = 0; k < 4; ++k) {
    EXPECT_EQ(g->stages[k].peakInFlight, 8);
    EXPECT_EQ(f->stages[k].peakInFlight, 4 - k);
  }
}

}  // namespace
}  // namespace bubblescope::layout
