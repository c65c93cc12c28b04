// schedule_playback: op order, bubble so far and activations in flight of a
// simulated step, against the papers' numbers.
#include "planning/schedule_playback.h"

#include <gtest/gtest.h>

#include "planning/formulas.h"

namespace bubblescope::layout {
namespace {

struct Played {
  Schedule schedule;
  Simulation sim;
  std::vector<PlaybackOp> order;
};

Played play(ScheduleKind kind, int32_t p, int32_t m, int32_t v = 1) {
  Played r;
  r.schedule = makeSchedule(kind, p, m, v).value();
  r.sim = simulate(r.schedule, unitCosts(r.schedule)).value();
  r.order = playbackOrder(r.schedule, r.sim);
  return r;
}

TEST(SchedulePlayback, ListsEveryComputeOpOnceInStartOrder) {
  const Played r = play(ScheduleKind::kOneFOneB, 4, 8);
  // p·m forwards and p·m fused backwards; the zero-cost collective and
  // optimizer step take no time and are not listed.
  ASSERT_EQ(r.order.size(), 4u * 8u * 2u);
  for (size_t i = 1; i < r.order.size(); ++i) {
    EXPECT_LE(r.order[i - 1].start, r.order[i].start) << i;
  }
  EXPECT_EQ(r.order.front().stage, 0);
  EXPECT_EQ(r.order.front().op.type, OpType::kForward);
  EXPECT_EQ(r.order.front().op.microBatch, 0);
  EXPECT_EQ(r.order.back().stage, 0);  // the last backward runs on stage 0
  EXPECT_EQ(r.order.back().op.type, OpType::kBackward);
}

TEST(SchedulePlayback, BubbleSoFarEndsAtTheSimulatedAndFormulaBubble) {
  for (ScheduleKind kind : {ScheduleKind::kGPipe, ScheduleKind::kOneFOneB}) {
    const Played r = play(kind, 4, 8);
    const double all = bubbleSoFar(r.order, 4, r.order.size());
    EXPECT_NEAR(all, r.sim.bubbleFraction, 1e-12);
    EXPECT_NEAR(all, formulaBubble(kind, 4, 8), 1e-12);  // 3/11
    EXPECT_NEAR(all, 3.0 / 11.0, 1e-12);
  }
  const Played r = play(ScheduleKind::kInterleaved, 4, 8, 2);
  EXPECT_NEAR(bubbleSoFar(r.order, 4, r.order.size()), 3.0 / 19.0, 1e-12);
}

TEST(SchedulePlayback, BubbleSoFarCountsOnlyTheShownOps) {
  const Played r = play(ScheduleKind::kGPipe, 4, 8);
  EXPECT_EQ(bubbleSoFar(r.order, 4, 0), 0.0);
  // The first op is stage 0's F0 over [0, 1]: three of four stages idle.
  EXPECT_DOUBLE_EQ(bubbleSoFar(r.order, 4, 1), 0.75);
  // After F0 on stage 0 and F1 on stage 0 and F0 on stage 1 (both start at 1):
  // busy 3 over [0, 2] on 4 stages.
  EXPECT_DOUBLE_EQ(bubbleSoFar(r.order, 4, 3), 1.0 - 3.0 / 8.0);
}

TEST(SchedulePlayback, OneFOneBHoldsPMinusKActivationsGPipeHoldsM) {
  const int32_t p = 4, m = 8;
  const Played onef = play(ScheduleKind::kOneFOneB, p, m);
  const Played gpipe = play(ScheduleKind::kGPipe, p, m);
  const auto a = activationsInFlight(onef.order, p, onef.order.size());
  const auto g = activationsInFlight(gpipe.order, p, gpipe.order.size());
  ASSERT_EQ(a.size(), 4u);
  for (int32_t k = 0; k < p; ++k) {
    EXPECT_EQ(peakOf(a[k]), p - k) << "1f1b stage " << k;
    EXPECT_EQ(peakOf(g[k]), m) << "gpipe stage " << k;
    EXPECT_EQ(peakOf(a[k]), onef.sim.stages[k].peakInFlight);
    EXPECT_EQ(peakOf(g[k]), gpipe.sim.stages[k].peakInFlight);
    EXPECT_EQ(a[k].front().time, 0.0);
    EXPECT_EQ(a[k].back().count, 0) << "every activation is freed by the step's end";
  }
}

TEST(SchedulePlayback, ZeroBubbleHoldsActivationsUntilTheWeightGradient) {
  const Played r = play(ScheduleKind::kZeroBubbleH1, 4, 8);
  const auto a = activationsInFlight(r.order, 4, r.order.size());
  for (int32_t k = 0; k < 4; ++k) {
    EXPECT_EQ(peakOf(a[k]), r.sim.stages[k].peakInFlight) << k;
    EXPECT_LE(peakOf(a[k]), 4) << k;
  }
}

TEST(SchedulePlayback, InFlightOfAPrefixCountsOnlyItsOps) {
  const Played r = play(ScheduleKind::kGPipe, 2, 3);
  // GPipe on 2 stages, m = 3: stage 0 runs F0 F1 F2 at 0,1,2; the first
  // three ops shown are stage 0's F0, F1 and stage 1's F0 (starting at 1).
  const auto a = activationsInFlight(r.order, 2, 3);
  EXPECT_EQ(peakOf(a[0]), 2);
  EXPECT_EQ(peakOf(a[1]), 1);
  EXPECT_EQ(peakOf(activationsInFlight(r.order, 2, 0)[0]), 0);
}

}  // namespace
}  // namespace bubblescope::layout
