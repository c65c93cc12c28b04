// fitStepEndWait(): the wait at the step-end gradient collective of ranks
// sharing cores, fitted so the prediction of a measured run's own layout
// meets its step (planning/step_end_wait_fit.h), and the prediction adding
// it where ranks share cores only. Costs are made up (shared_cores_fixture.h).
#include "planning/step_end_wait_fit.h"

#include <gtest/gtest.h>

#include <limits>

#include "planning/core_sharing.h"
#include "planning/formulas.h"
#include "planning/link_class.h"
#include "planning/prediction.h"
#include "tests/layout/shared_cores_fixture.h"

namespace bubblescope::layout {
namespace {

constexpr double kMs = kFixtureMs;

Layout dp(int32_t degree, int32_t m) {
  Layout l;
  l.dp = degree;
  l.microBatches = m;
  return l;
}

double stepOf(const Layout& l, const Calibration& c) {
  return predictLayout(l, c).value().stepNs;
}

TEST(StepEndWaitFit, PredictRecoversTheWaitThatMadeTheStepAndAddsItToTheStep) {
  const Calibration c = sharedCoresCalibration(2);
  const Layout run = dp(4, 2);  // 4 ranks on 2 cores
  const double without = stepOf(run, c);
  const double params = parametersPerRank(run);
  // A run 27 ms slower than the model without a wait.
  auto fit = fitStepEndWait(run, c, without + 27 * kMs);
  ASSERT_TRUE(fit.isOk()) << fit.status().message();
  EXPECT_DOUBLE_EQ(fit->predictedWithoutNs, without);
  EXPECT_NEAR(fit->nsPerParameter * params, 27 * kMs, 1e-6 * kMs);
  // Stored, the run's own layout is predicted at its step, and another m
  // of the same ranks grows by the same wait (it is per step, not per
  // micro-batch).
  const Calibration fitted = withStepEndWait(c, fit->nsPerParameter);
  EXPECT_NEAR(stepOf(run, fitted), without + 27 * kMs, 1e-6 * kMs);
  const Layout m4 = dp(4, 4);
  EXPECT_NEAR(stepOf(m4, fitted) - stepOf(m4, c), 27 * kMs, 1e-6 * kMs);
  // A run faster than the model: no negative wait.
  auto fast = fitStepEndWait(run, c, 0.5 * without);
  ASSERT_TRUE(fast.isOk());
  EXPECT_EQ(fast->nsPerParameter, 0.0);
}

// dp2 x pp2 1F1B m4 on 2 cores (4 ranks): a pipeline's wait is its own. Fitted
// to a pipelined run it is stored apart from dp's (kStepEndWaitPipelineOp)
// and priced for pipelines only; a pipeline without one takes dp's.
TEST(StepEndWaitFit, PredictAPipelineFitsAndTakesItsOwnWait) {
  Calibration c = sharedCoresCalibration(2);
  c.links.push_back({"pp", kSameHost, "p2p", 2, 0, 0.0, 1, 8, 8});
  c.links.push_back({"pp", kSameHost, kReceiveWake, 2, 0, 0.0, 1, 8, 8});
  Layout pipe = dp(2, 4);
  pipe.pp = 2;
  pipe.schedule = ScheduleKind::kOneFOneB;
  const Layout flat = dp(4, 2);
  const double none = stepOf(pipe, c);
  // dp's wait alone: the pipeline takes it.
  const Calibration dpWait = withStepEndWait(c, 20 * kMs / parametersPerRank(flat));
  EXPECT_GT(stepOf(pipe, dpWait), none + 1 * kMs);
  // Fitted to a pipelined run 9 ms slower than the model without a wait.
  const double without = stepOf(pipe, withStepEndWait(dpWait, 0.0, /*pipeline=*/true));
  EXPECT_NEAR(without, none, 1e-6 * kMs);
  auto fit = fitStepEndWait(pipe, dpWait, without + 9 * kMs);
  ASSERT_TRUE(fit.isOk()) << fit.status().message();
  EXPECT_NEAR(fit->predictedWithoutNs, without, 1e-6 * kMs);
  EXPECT_NEAR(fit->nsPerParameter * parametersPerRank(pipe), 9 * kMs, 1e-6 * kMs);
  const Calibration fitted = withStepEndWait(dpWait, fit->nsPerParameter, /*pipeline=*/true);
  EXPECT_EQ(fitted.perParameterNs(kSharedCoresPart, kStepEndWaitOp, false),
            dpWait.perParameterNs(kSharedCoresPart, kStepEndWaitOp, false));
  EXPECT_GT(stepOf(pipe, fitted), without);
  EXPECT_LT(stepOf(pipe, fitted), stepOf(pipe, dpWait));
  // dp layouts keep dp's wait.
  EXPECT_DOUBLE_EQ(stepOf(flat, fitted), stepOf(flat, dpWait));
}

TEST(StepEndWaitFit, PredictRanksWithACoreEachPayNoWait) {
  // 2 ranks on 2 cores share nothing: the wait is not theirs.
  const Calibration c = withStepEndWait(sharedCoresCalibration(2), 1000.0);
  const Layout two = dp(2, 2);
  EXPECT_DOUBLE_EQ(stepOf(two, c), stepOf(two, sharedCoresCalibration(2)));
  auto fit = fitStepEndWait(two, sharedCoresCalibration(2), 100 * kMs);
  EXPECT_FALSE(fit.isOk());
}

TEST(StepEndWaitFit, BadInputFailsWithOneMessage) {
  const Calibration c = sharedCoresCalibration(2);
  EXPECT_FALSE(fitStepEndWait(dp(1, 2), c, 100 * kMs).isOk());  // no dp
  for (double bad : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN(),
                     std::numeric_limits<double>::infinity()}) {
    auto fit = fitStepEndWait(dp(4, 2), c, bad);
    ASSERT_FALSE(fit.isOk()) << bad;
    EXPECT_NE(fit.status().message().find("not a finite number > 0"), std::string::npos);
  }
  // Stored twice, the wait replaces the earlier one.
  const Calibration twice = withStepEndWait(withStepEndWait(c, 1.0), 2.0);
  int32_t entries = 0;
  for (const OpCostEntry& e : twice.ops) {
    if (e.part == kSharedCoresPart && e.op == kStepEndWaitOp) {
      ++entries;
      EXPECT_EQ(e.wallNs, 2.0);
    }
  }
  EXPECT_EQ(entries, 1);
  // A time (ns per parameter): a calibration scaled to another speed
  // scales it, unlike the shared-cores ratios.
  const Calibration scaled = withTimesScaled(twice, 0.5);
  EXPECT_EQ(scaled.perParameterNs(kSharedCoresPart, kStepEndWaitOp, false).value_or(0), 1.0);
}

}  // namespace
}  // namespace bubblescope::layout
