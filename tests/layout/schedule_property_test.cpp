// Property tests over many (p, m, v) for the four schedule generators. The
// checks here walk the op lists directly (independently of simulate()), and
// then simulate them to check the timing properties against the papers.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "planning/formulas.h"
#include "engine/layout/schedule.h"
#include "planning/simulator.h"

namespace bubblescope::layout {
namespace {

struct Case {
  ScheduleKind kind;
  int32_t p, m, v;
};

std::string name(const Case& c) {
  return std::string(scheduleKindName(c.kind)) + " p=" + std::to_string(c.p) +
         " m=" + std::to_string(c.m) + " v=" + std::to_string(c.v);
}

// Every valid case with p in 1..8, m in 1..16, v in 2..3 for interleaved.
std::vector<Case> allCases() {
  std::vector<Case> cases;
  for (int32_t p = 1; p <= 8; ++p) {
    for (int32_t m = 1; m <= 16; ++m) {
      cases.push_back({ScheduleKind::kGPipe, p, m, 1});
      cases.push_back({ScheduleKind::kOneFOneB, p, m, 1});
      if (m >= p) cases.push_back({ScheduleKind::kZeroBubbleH1, p, m, 1});
      for (int32_t v = 2; v <= 3; ++v) {
        if (m % p == 0) cases.push_back({ScheduleKind::kInterleaved, p, m, v});
      }
    }
  }
  return cases;
}

Schedule make(const Case& c) {
  Result<Schedule> s = makeSchedule(c.kind, c.p, c.m, c.v);
  EXPECT_TRUE(s.isOk()) << name(c) << ": " << s.status().message();
  return std::move(s).value();
}

TEST(ScheduleProperties, CaseListCoversEverySchedule) {
  std::map<ScheduleKind, int> perKind;
  for (const Case& c : allCases()) ++perKind[c.kind];
  EXPECT_EQ(perKind[ScheduleKind::kGPipe], 128);
  EXPECT_EQ(perKind[ScheduleKind::kOneFOneB], 128);
  EXPECT_GT(perKind[ScheduleKind::kInterleaved], 50);
  EXPECT_GT(perKind[ScheduleKind::kZeroBubbleH1], 50);
}

TEST(ScheduleProperties, EachMicroBatchAndChunkRunsForwardAndBackwardOnceInOrder) {
  for (const Case& c : allCases()) {
    const Schedule s = make(c);
    ASSERT_EQ(static_cast<int32_t>(s.stageOps.size()), c.p) << name(c);
    for (int32_t k = 0; k < c.p; ++k) {
      // position of F, B (input half or fused) and W per (mb, chunk)
      std::map<std::pair<int32_t, int32_t>, std::vector<size_t>> f, b, w;
      const auto& ops = s.stageOps[k];
      for (size_t i = 0; i < ops.size(); ++i) {
        const Op& op = ops[i];
        const auto key = std::make_pair(op.microBatch, op.chunk);
        if (op.type == OpType::kForward) f[key].push_back(i);
        if (op.type == OpType::kBackward || op.type == OpType::kBackwardInput) {
          b[key].push_back(i);
        }
        if (op.type == OpType::kBackward || op.type == OpType::kBackwardWeight) {
          w[key].push_back(i);
        }
      }
      ASSERT_EQ(static_cast<int32_t>(f.size()), c.m * s.chunks) << name(c) << " stage " << k;
      for (int32_t mb = 0; mb < c.m; ++mb) {
        for (int32_t ch = 0; ch < s.chunks; ++ch) {
          const auto key = std::make_pair(mb, ch);
          ASSERT_EQ(f[key].size(), 1u) << name(c) << " stage " << k << " mb " << mb;
          ASSERT_EQ(b[key].size(), 1u) << name(c) << " stage " << k << " mb " << mb;
          ASSERT_EQ(w[key].size(), 1u) << name(c) << " stage " << k << " mb " << mb;
          EXPECT_LT(f[key][0], b[key][0]) << name(c) << " stage " << k << " mb " << mb;
          EXPECT_LE(b[key][0], w[key][0]) << name(c) << " stage " << k << " mb " << mb;
        }
      }
      // The step ends with the gradient collective and the optimizer step.
      ASSERT_GE(ops.size(), 2u);
      EXPECT_EQ(ops[ops.size() - 2].type, OpType::kAllReduceGrads) << name(c);
      EXPECT_EQ(ops.back().type, OpType::kOptimizerStep) << name(c);
      // Split backward exactly for ZB-H1.
      const bool split = std::any_of(
          ops.begin(), ops.end(), [](const Op& op) { return op.type == OpType::kBackwardWeight; });
      EXPECT_EQ(split, c.kind == ScheduleKind::kZeroBubbleH1) << name(c);
    }
  }
}

TEST(ScheduleProperties, EverySendHasExactlyOneMatchingReceiveOnTheAdjacentStage) {
  for (const Case& c : allCases()) {
    const Schedule s = make(c);
    const int32_t p = c.p, lastV = p * s.chunks - 1;
    // (isGrad, receiving virtual stage, mb) -> counts from each side
    std::map<std::tuple<bool, int32_t, int32_t>, int> sends, recvs;
    for (int32_t k = 0; k < p; ++k) {
      for (const Op& op : s.stageOps[k]) {
        if (!isPointToPoint(op.type)) {
          EXPECT_EQ(op.peer, -1) << name(c) << " " << toString(op);
          continue;
        }
        const int32_t vs = s.virtualStage(k, op.chunk);
        const bool grad = op.type == OpType::kSendGrad || op.type == OpType::kRecvGrad;
        const bool isSend = op.type == OpType::kSendActivation || op.type == OpType::kSendGrad;
        // Activations flow up the virtual pipeline, gradients down.
        const int32_t other = (isSend != grad) ? vs + 1 : vs - 1;
        ASSERT_GE(other, 0) << name(c) << " stage " << k << " " << toString(op);
        ASSERT_LE(other, lastV) << name(c) << " stage " << k << " " << toString(op);
        EXPECT_EQ(op.peer, other % p) << name(c) << " stage " << k << " " << toString(op);
        EXPECT_NE(op.peer, k) << name(c) << ": no transfer ops within one rank";
        const int32_t receiver = isSend ? other : vs;
        (isSend ? sends : recvs)[{grad, receiver, op.microBatch}]++;
      }
    }
    EXPECT_EQ(sends, recvs) << name(c);
    for (const auto& [key, n] : sends) EXPECT_EQ(n, 1) << name(c);
    // With p > 1 every boundary between virtual stages carries each micro-batch
    // once in each direction.
    const size_t boundaries = p > 1 ? static_cast<size_t>(lastV) : 0;
    EXPECT_EQ(sends.size(), 2 * boundaries * c.m) << name(c);
  }
}

TEST(ScheduleProperties, ExecutingInOrderNeverDeadlocks) {
  CostModel costs;
  costs.forward = 1.0;
  costs.backwardInput = 2.0;
  costs.backwardWeight = 0.5;
  costs.comm = 0.3;
  for (const Case& c : allCases()) {
    const Result<Simulation> sim = simulate(make(c), costs);
    EXPECT_TRUE(sim.isOk()) << name(c) << ": " << sim.status().message();
  }
}

// Peak in-flight micro-batch chunks, counted from the op list alone.
std::vector<int32_t> peakInFlight(const Schedule& s) {
  std::vector<int32_t> peaks;
  for (const auto& ops : s.stageOps) {
    int32_t live = 0, peak = 0;
    for (const Op& op : ops) {
      if (op.type == OpType::kForward) peak = std::max(peak, ++live);
      if (op.type == OpType::kBackward || op.type == OpType::kBackwardWeight) --live;
    }
    peaks.push_back(peak);
  }
  return peaks;
}

TEST(ScheduleProperties, ActivationMemoryMatchesThePapers) {
  for (const Case& c : allCases()) {
    const Schedule s = make(c);
    const std::vector<int32_t> peaks = peakInFlight(s);
    const Result<Simulation> sim = simulate(s, unitCosts(s));
    ASSERT_TRUE(sim.isOk()) << name(c);
    for (int32_t k = 0; k < c.p; ++k) {
      EXPECT_EQ(sim->stages[k].peakInFlight, peaks[k]) << name(c) << " stage " << k;
      switch (c.kind) {
        case ScheduleKind::kGPipe:
          EXPECT_EQ(peaks[k], c.m) << name(c);
          break;
        case ScheduleKind::kOneFOneB:
          // Stage k holds at most p - k micro-batches (docs/formulas.md).
          EXPECT_EQ(peaks[k], std::min(c.p - k, c.m)) << name(c) << " stage " << k;
          break;
        case ScheduleKind::kZeroBubbleH1:
          // Counting until W: at most p on every stage, 1F1B's stage-0 peak.
          EXPECT_EQ(peaks[k], std::min(c.p, c.m)) << name(c) << " stage " << k;
          break;
        case ScheduleKind::kInterleaved:
          // Warm-up forwards plus the first steady-state forward (chunk units).
          EXPECT_EQ(peaks[k], std::min(2 * (c.p - k - 1) + (c.v - 1) * c.p + 1, c.m * c.v))
              << name(c) << " stage " << k;
          break;
      }
    }
  }
}

TEST(ScheduleProperties, WarmupCountsEqualMegatrons) {
  for (const Case& c : allCases()) {
    if (c.kind == ScheduleKind::kGPipe) continue;
    const Schedule s = make(c);
    const int32_t total = c.m * s.chunks;
    for (int32_t k = 0; k < c.p; ++k) {
      // Megatron-LM: p - k - 1 (1F1B, also ZB-H1's first phase);
      // 2(p - k - 1) + (v - 1)·p with interleaving; capped at the total.
      const int32_t megatron =
          c.kind == ScheduleKind::kInterleaved ? 2 * (c.p - k - 1) + (c.v - 1) * c.p : c.p - k - 1;
      const int32_t warmup = std::min(megatron, total);
      EXPECT_EQ(warmupForwards(c.kind, c.p, c.m, c.v, k), warmup) << name(c);
      int32_t forwards = 0;
      for (const Op& op : s.stageOps[k]) {
        if (op.type == OpType::kBackward || op.type == OpType::kBackwardInput) break;
        if (op.type == OpType::kForward) ++forwards;
      }
      // The warm-up, then the steady state's first forward precedes the
      // first backward.
      EXPECT_EQ(forwards, std::min(warmup + 1, total)) << name(c) << " stage " << k;
    }
  }
}

TEST(ScheduleProperties, SimulatedBubbleEqualsTheFormulaWithEqualForwardAndBackward) {
  CostModel costs;  // t_F = t_B = 1, t_W = 0, no communication
  for (const Case& c : allCases()) {
    if (c.kind == ScheduleKind::kZeroBubbleH1) continue;
    const Result<Simulation> sim = simulate(make(c), costs);
    ASSERT_TRUE(sim.isOk()) << name(c);
    const double expected = c.kind == ScheduleKind::kInterleaved
                                ? (c.p - 1.0) / (c.v * c.m + c.p - 1.0)
                                : (c.p - 1.0) / (c.m + c.p - 1.0);
    EXPECT_NEAR(sim->bubbleFraction, expected, 1e-9) << name(c);
    EXPECT_NEAR(formulaBubble(c.kind, c.p, c.m, c.v), expected, 1e-12) << name(c);
    // Every stage has the same share of idle time.
    for (const StageStats& st : sim->stages) {
      EXPECT_NEAR(st.idle / sim->makespan, expected, 1e-9) << name(c);
    }
  }
}

TEST(ScheduleProperties, ZeroBubbleH1HasAThirdOfOneFOneBsBubble) {
  CostModel costs;
  costs.forward = costs.backwardInput = costs.backwardWeight = 1.0;  // t_F = t_B = t_W
  for (const Case& c : allCases()) {
    if (c.kind != ScheduleKind::kZeroBubbleH1) continue;
    const Result<Simulation> zb = simulate(make(c), costs);
    const Result<Simulation> base = simulate(oneFOneB(c.p, c.m).value(), costs);
    ASSERT_TRUE(zb.isOk() && base.isOk()) << name(c);
    // Qi et al.: 1F1B idles (p-1)(t_F+t_B+t_W) per stage, ZB-H1 (p-1)(t_F+t_B-t_W).
    EXPECT_NEAR(base->totalIdle(), c.p * (c.p - 1) * 3.0, 1e-9) << name(c);
    EXPECT_NEAR(zb->totalIdle(), c.p * (c.p - 1) * 1.0, 1e-9) << name(c);
    EXPECT_NEAR(zb->bubbleFraction, formulaBubble(c.kind, c.p, c.m), 1e-9) << name(c);
    if (c.p > 1) {
      EXPECT_LT(zb->bubbleFraction, base->bubbleFraction) << name(c);
    }
    // Same peak activation memory as 1F1B (its stage 0).
    EXPECT_EQ(zb->maxPeakInFlight(), base->maxPeakInFlight()) << name(c);
  }
}

TEST(ScheduleProperties, GeneratorsRejectWhatTheyCannotSchedule) {
  EXPECT_EQ(gpipe(0, 4).status().message(), "gpipe needs p >= 1 and m >= 1, got p 0, m 4");
  EXPECT_EQ(oneFOneB(4, 0).status().message(), "1f1b needs p >= 1 and m >= 1, got p 4, m 0");
  EXPECT_EQ(interleaved(4, 6, 2).status().message(),
            "interleaved needs m divisible by p, got m 6, p 4");
  EXPECT_EQ(interleaved(4, 8, 1).status().message(),
            "interleaved needs v >= 2 chunks per stage, got v 1 (with v = 1 use 1f1b)");
  EXPECT_EQ(zeroBubbleH1(4, 3).status().message(), "zb-h1 needs m >= p, got m 3, p 4");
}

TEST(ScheduleProperties, ReduceScatterReplacesAllReduceForZeroOne) {
  const Schedule s = oneFOneB(2, 2, ZeroStage::kOptimizer).value();
  EXPECT_EQ(s.zeroStage, ZeroStage::kOptimizer);
  for (const auto& ops : s.stageOps) {
    ASSERT_GE(ops.size(), 3u);
    EXPECT_EQ(ops[ops.size() - 3], (Op{OpType::kReduceScatterGrads, -1, 0, -1}));
    EXPECT_EQ(ops[ops.size() - 2].type, OpType::kOptimizerStep);
    EXPECT_EQ(ops.back(), (Op{OpType::kAllGatherParams, -1, 0, -1}));  // ZeRO 1 updates a shard
    EXPECT_EQ(std::count_if(ops.begin(), ops.end(),
                            [](const Op& op) { return op.type == OpType::kAllReduceGrads; }),
              0);
  }
}

// ZeRO 2 and 3 reduce-scatter every micro-batch's gradients: the op list holds
// one ReduceScatterGrads(mb, chunk) right after the op that completes that
// micro-batch's weight gradients (Backward, or its SendGrad; W), and no
// step-level collective; the updated shards are all-gathered at ZeRO 2 only.
TEST(ScheduleProperties, ZeroTwoAndThreeReduceEachMicroBatchRightAfterItsBackward) {
  for (ZeroStage zero : {ZeroStage::kGradients, ZeroStage::kParameters}) {
    for (const Case& c : allCases()) {
      const Schedule s = makeSchedule(c.kind, c.p, c.m, c.v, zero).value();
      for (int32_t k = 0; k < c.p; ++k) {
        const auto& ops = s.stageOps[k];
        int32_t reductions = 0;
        for (size_t i = 0; i < ops.size(); ++i) {
          const Op& op = ops[i];
          if (op.type == OpType::kAllReduceGrads) ADD_FAILURE() << name(c);
          if (op.type != OpType::kReduceScatterGrads) continue;
          ++reductions;
          ASSERT_GE(op.microBatch, 0) << name(c) << " stage " << k;
          ASSERT_GE(i, 1u);
          // The op before it: the W, the fused Backward, or that Backward's SendGrad.
          const Op& before = ops[i - 1];
          const Op& completing =
              before.type == OpType::kSendGrad && i >= 2 ? ops[i - 2] : ops[i - 1];
          EXPECT_TRUE(completing.type ==
                      (s.splitsBackward() ? OpType::kBackwardWeight : OpType::kBackward))
              << name(c) << " stage " << k << " op " << i;
          EXPECT_EQ(completing.microBatch, op.microBatch) << name(c);
          EXPECT_EQ(completing.chunk, op.chunk) << name(c);
        }
        EXPECT_EQ(reductions, c.m * s.chunks) << name(c) << " stage " << k;
        const bool gathers = zero == ZeroStage::kGradients;
        EXPECT_EQ(ops.back().type, gathers ? OpType::kAllGatherParams : OpType::kOptimizerStep)
            << name(c);
      }
      // The simulator accepts the lists and charges gradSync / v per reduction:
      // m reductions of the whole stage's gradients per step.
      CostModel costs = unitCosts(s);
      costs.gradSync = 1.0;
      const Simulation sim = simulate(s, costs).value();
      const double compute = c.m * (costs.forward + costs.backwardInput + costs.backwardWeight);
      EXPECT_NEAR(sim.stages[0].busy, compute + c.m * costs.gradSync, 1e-9) << name(c);
    }
  }
}

// Every generated list, at every ZeRO stage, holds what a training step must
// (checkOpList: the rule the executor and the simulator enforce).
TEST(ScheduleProperties, EveryGeneratedListHoldsTheOpListRule) {
  for (ZeroStage zero : {ZeroStage::kNone, ZeroStage::kOptimizer, ZeroStage::kGradients,
                         ZeroStage::kParameters}) {
    for (const Case& c : allCases()) {
      const Schedule s = makeSchedule(c.kind, c.p, c.m, c.v, zero).value();
      for (int32_t k = 0; k < c.p; ++k) {
        const Status ok = checkOpList(s.stageOps[k], zero, k, s.chunks);
        EXPECT_TRUE(ok.isOk()) << name(c) << " stage " << k << ": " << ok.message();
      }
    }
  }
}

// The rule names the stage and what is missing or misplaced.
TEST(ScheduleProperties, TheOpListRuleRejectsWhatAStepCannotRun) {
  auto message = [](std::vector<Op> ops, ZeroStage zero, int32_t chunks = 1) {
    return checkOpList(ops, zero, 2, chunks).message();
  };
  const std::vector<Op> plain = oneFOneB(1, 2).value().stageOps[0];  // [.., AllReduce, Step]
  const std::string noCollective =
      "stage 2's op list must hold one gradient collective after its last backward";
  std::vector<Op> early = plain;
  std::rotate(early.begin(), early.end() - 2, early.end() - 1);  // the collective first
  EXPECT_EQ(message(early, ZeroStage::kNone), noCollective);
  std::vector<Op> twoSteps = plain;
  twoSteps.push_back(plain.back());
  EXPECT_EQ(message(twoSteps, ZeroStage::kNone),
            noCollective + " and one OptimizerStep after that");
  EXPECT_EQ(message(plain, ZeroStage::kOptimizer),
            "stage 2's op list must hold one AllGatherParams after its OptimizerStep under ZeRO 1");
  EXPECT_EQ(message(plain, ZeroStage::kGradients),
            "stage 2's op list must reduce-scatter each micro-batch's gradients (one "
            "ReduceScatterGrads per micro-batch and chunk, after its backward) under ZeRO 2");
  std::vector<Op> beyond = plain;
  beyond[0].chunk = 1;
  EXPECT_EQ(message(beyond, ZeroStage::kNone),
            "stage 2's op Forward(mb 0, chunk 1) names a chunk beyond its 1");
}

TEST(ScheduleKindNames, ParseAndPrintRoundTrip) {
  for (ScheduleKind k : allScheduleKinds()) {
    EXPECT_EQ(parseScheduleKind(scheduleKindName(k)).value(), k);
  }
  EXPECT_EQ(parseScheduleKind("1F1B").status().message(),
            "unknown schedule '1F1B' (known: gpipe, 1f1b, interleaved, zb-h1)");
}

}  // namespace
}  // namespace bubblescope::layout
