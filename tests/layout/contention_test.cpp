// Background load (planning/contention.h, issue 35 point 4): the probe's
// arithmetic, the stretch, a calibration's own overhead, and predictions
// made for a background from calibrations taken at different loads. Costs
// are made up so every expected step follows from the model by hand.
#include "planning/contention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "planning/formulas.h"
#include "planning/link_class.h"
#include "planning/planner.h"
#include "planning/prediction.h"

namespace bubblescope::layout {
namespace {

constexpr double kMs = 1e6;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The default model's layers at 1 ms forward and 2 ms backward of thread
// CPU per micro-batch (embedding, head, optimizer free), measured with
// `wallPerCpu` x that in wall time on 2 cores by 2 ranks under
// `background` (none recorded when negative).
Calibration calibrationAt(double wallPerCpu, double background) {
  Calibration c;
  c.model = defaultLayoutModel();
  c.cores = 2;
  c.ranksPerHost = 2;
  for (const char* part : {"block", "embedding", "head"}) {
    const double f = std::string(part) == "block" ? 1 * kMs : 0;
    c.ops.push_back({part, "forward", 1, 1, wallPerCpu * f, f, 1});
    c.ops.push_back({part, "backward", 1, 1, wallPerCpu * 2 * f, 2 * f, 1});
  }
  c.ops.push_back({"optimizer", "step", 0, 1, 0, 0, 1});
  c.links.push_back({"dp", kSameHost, "allreduce", 2, 0.5 * kMs, 0.0, 1, 8, 8});
  return background < 0 ? c : withBackground(c, background);
}

TEST(PredictContention, TheProbesShareGivesTheBackground) {
  // 2 threads with 1/3 of a core each on 2 cores: 6 runnable, 4 of them others.
  EXPECT_DOUBLE_EQ(backgroundFromShare(1.0 / 3, 2, 2), 4.0);
  EXPECT_DOUBLE_EQ(backgroundFromShare(0.4, 1, 2), 4.0);
  EXPECT_NEAR(backgroundFromShare(0.8, 2, 2), 0.5, 1e-12);
  // A core each: nothing else wants them (or too little to show).
  EXPECT_DOUBLE_EQ(backgroundFromShare(1.0, 2, 2), 0.0);
  EXPECT_DOUBLE_EQ(backgroundFromShare(1.02, 2, 2), 0.0);
  for (double bad : {0.0, -0.5, kNaN, std::numeric_limits<double>::infinity()}) {
    EXPECT_DOUBLE_EQ(backgroundFromShare(bad, 2, 2), 0.0) << bad;
  }
  EXPECT_DOUBLE_EQ(backgroundFromShare(0.5, 0, 2), 0.0);
  EXPECT_DOUBLE_EQ(backgroundFromShare(0.5, 2, 0), 0.0);
}

TEST(PredictContention, TheStretchIsRanksAndBackgroundOverCores) {
  EXPECT_DOUBLE_EQ(computeStretch(2, 4, 2), 3.0);
  EXPECT_DOUBLE_EQ(computeStretch(4, 0, 2), 2.0);  // time-sharing alone
  EXPECT_DOUBLE_EQ(computeStretch(1, 0.5, 2), 1.0);  // a free core left
  EXPECT_DOUBLE_EQ(computeStretch(2, -1, 2), 1.0);
  EXPECT_DOUBLE_EQ(computeStretch(8, 4, 0), 1.0);  // cores unknown: no limit
  EXPECT_DOUBLE_EQ(computeStretch(2, kNaN, 2), 1.0);
}

TEST(PredictContention, TheCalibrationsOwnOverheadIsWhatItsLoadLeavesUnexplained) {
  // Measured 2.7x its CPU time under 4 busy threads (stretch 3): rho 0.9
  // (a rank waking from a wait runs ahead of the busy threads for a while).
  EXPECT_NEAR(ownOverhead(calibrationAt(2.7, 4)), 0.9, 1e-12);
  EXPECT_NEAR(ownOverhead(calibrationAt(1.05, 0)), 1.05, 1e-12);
  EXPECT_DOUBLE_EQ(ownOverhead(calibrationAt(3, -1)), 1.0);  // none recorded
  const Calibration twice = withBackground(calibrationAt(1, 4), 2);
  EXPECT_EQ(recordedBackground(twice), 2.0);
  EXPECT_EQ(std::count_if(twice.ops.begin(), twice.ops.end(),
                          [](const OpCostEntry& e) { return e.part == kContentionPart; }),
            1);
  EXPECT_FALSE(recordedBackground(calibrationAt(1, -1)).has_value());
  // The op spans' stretch, when measured, stands for the layers' (it holds
  // the time a rank lost between two layers too).
  Calibration ops = calibrationAt(2.7, 4);
  ops.ops.push_back({kContentionPart, kOpStretchOp, 0, 1, 3.3, 3.3, 8});
  EXPECT_DOUBLE_EQ(measuredStretch(ops), 3.3);
  EXPECT_NEAR(ownOverhead(ops), 1.1, 1e-12);
}

// The step's time outside ops and ZeRO's bucket work come from gaps between
// spans: no CPU time of their own (both columns hold the wall time), so
// they are taken out of the calibration's measured stretch (3 here).
TEST(PredictContention, CostsWithoutACpuMeasurementAreTakenOutOfTheCalibrationsStretch) {
  Calibration c = calibrationAt(3, 4);
  EXPECT_DOUBLE_EQ(measuredStretch(c), 3.0);
  std::erase_if(c.ops, [](const OpCostEntry& e) { return e.part == "optimizer"; });
  c.ops.push_back({"optimizer", "step", 0, 1, 3, 1, 1});  // measured: its CPU column
  c.ops.push_back({"step", "other", 0, 1, 6, 6, 1});      // a gap: wall in both
  EXPECT_DOUBLE_EQ(*perParameterCpuNs(c, "step", "other"), 2.0);
  EXPECT_DOUBLE_EQ(*perParameterCpuNs(c, "optimizer", "step"), 1.0);
  EXPECT_FALSE(perParameterCpuNs(c, kZeroBucketPart, kZeroBucketOp).has_value());
  // One rank, m = 1: 2 layers x 3 ms of compute, then 1 + 2 ns per parameter (the
  // optimizer, the time outside ops), all at the stretch (1 + 4) / 2 x rho 1.
  Layout l;
  PredictOptions o;
  o.background = 4;
  auto p = predictLayout(l, c, o);
  ASSERT_TRUE(p.isOk()) << p.status().message();
  EXPECT_NEAR(p->stepNs, 2.5 * (6 * kMs + 3 * parametersPerRank(l)), 1.0);
}

// One rank, m = 4 of the default model's 2 layers: 4 x 2 x 3 ms of CPU.
TEST(PredictContention, CalibrationsTakenAtDifferentLoadsPredictTheSame) {
  Layout l;
  l.microBatches = 4;
  const double cpuStep = 4 * 2 * 3 * kMs;
  const Calibration quiet = calibrationAt(1, 0), loaded = calibrationAt(3, 4);
  for (double background : {0.0, 1.0, 4.0, 9.0}) {
    PredictOptions o;
    o.background = background;
    auto a = predictLayout(l, quiet, o);
    auto b = predictLayout(l, loaded, o);
    ASSERT_TRUE(a.isOk() && b.isOk());
    const double stretch = std::max(1.0, (1 + background) / 2);
    EXPECT_NEAR(a->stepNs, cpuStep * stretch, 1.0) << background;
    EXPECT_NEAR(b->stepNs, cpuStep * stretch, 1.0) << background;
  }
  // Without a background the wall times stand as measured: 3x apart.
  auto a = predictLayout(l, quiet), b = predictLayout(l, loaded);
  ASSERT_TRUE(a.isOk() && b.isOk());
  EXPECT_NEAR(b->stepNs, 3 * a->stepNs, 1.0);
}

// dp2 m1 under 4 busy threads: compute 3 ms x stretch 3, the all-reduces
// (one bucket and the loss) at their fit, the warning says why.
TEST(PredictContention, ABackgroundStretchesComputeAndSaysSo) {
  Layout l;
  l.dp = 2;
  PredictOptions o;
  o.background = 4;
  auto p = predictLayout(l, calibrationAt(1, 0), o);
  ASSERT_TRUE(p.isOk()) << p.status().message();
  EXPECT_NEAR(p->stepNs, 2 * 3 * kMs * 3 + 2 * 0.5 * kMs, 1.0);
  ASSERT_EQ(p->warnings.size(), 1u);
  EXPECT_EQ(p->warnings[0].rfind("4.0 busy threads of other work beside 2 ranks", 0), 0u)
      << p->warnings[0];
  o.background = 0.2;  // too little to say
  auto quiet = predictLayout(l, calibrationAt(1, 0), o);
  ASSERT_TRUE(quiet.isOk());
  EXPECT_TRUE(quiet->warnings.empty());
  EXPECT_NEAR(quiet->stepNs, 2 * 3 * kMs * 1.1 + 2 * 0.5 * kMs, 1.0);
}

// pp2 1F1B m2 (a layer a stage) beside 4 busy threads on 2 cores, a rank a
// core: every op at the uniform stretch 3 (a waiting stage's core goes to
// the busy threads, not to the other stage): F 3 ms, B 6 ms; a blocked
// receive goes on 0.5 ms after its message (the wake-up). Stage 1 gets F0
// at 3 + 0.5, runs F0 B0 to 12.5, F1 B1 (its activation long there) to 21.5;
// stage 0 after F0 F1 (to 6) gets gradient 0 at 12.5 + 0.5, B0 to 19, then
// gradient 1 at 21.5 + 0.5, B1 to 28; the optimizer steps meet there and take
// the two 8-byte pipeline all-reduces (the dp fit stands in: 2 x 0.5 ms):
// 29 ms. Time-shared (stage 0's F1 alone, 2.5x) it would be shorter.
TEST(PredictContention, APipelineWithACoreARankStretchesEveryOpAndWakesUpLate) {
  Layout l;
  l.pp = 2;
  l.microBatches = 2;
  l.schedule = ScheduleKind::kOneFOneB;
  Calibration c = calibrationAt(1, 0);
  c.links.push_back({"pp", kSameHost, "p2p", 2, 0, 0.0, 1, 8, 8});
  c.links.push_back({"pp", kSameHost, kReceiveWake, 2, 0.5 * kMs, 0.0, 1, 8, 8});
  PredictOptions o;
  o.background = 4;
  auto p = predictLayout(l, c, o);
  ASSERT_TRUE(p.isOk()) << p.status().message();
  EXPECT_DOUBLE_EQ(p->recvWakeNs, 0.5 * kMs);
  EXPECT_NEAR(p->stepNs, 29 * kMs, 1.0);
  // The wake-up is idle time: in the bubble, not in exposed communication.
  EXPECT_NEAR(p->simulation.stages[0].waitRecv, (13 - 6 + 22 - 19) * kMs, 1.0);
  EXPECT_EQ(p->exposedCommNs.count("pp") ? p->exposedCommNs.at("pp") : 0.0, 0.0);
}

// plan predicts every candidate for the request's background: the single
// rank of world 1 at the stretch (1 + 4) / 2.
TEST(PredictContention, ThePlannerPredictsEveryCandidateForTheBackground) {
  PlanRequest r;
  r.world = 1;
  r.model = defaultLayoutModel();
  r.top = 1;
  const Calibration c = calibrationAt(1, 0);
  auto quiet = planLayouts(r, c);
  r.predict.background = 4;
  auto loaded = planLayouts(r, c);
  ASSERT_TRUE(quiet.isOk() && loaded.isOk());
  ASSERT_FALSE(quiet->best.empty());
  ASSERT_FALSE(loaded->best.empty());
  EXPECT_NEAR(loaded->best[0].prediction.stepNs, 2.5 * quiet->best[0].prediction.stepNs,
              1e-6 * quiet->best[0].prediction.stepNs);
}

}  // namespace
}  // namespace bubblescope::layout
