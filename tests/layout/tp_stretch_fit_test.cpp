// fitTpStretchPaid(): the share of the time-sharing stretch a tp group's
// compute pays, fitted so the prediction of a measured run's own layout
// meets its step (planning/tp_stretch_fit.h). Costs are made up; the
// measured steps are the model's own predictions at known shares.
#include "planning/tp_stretch_fit.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "planning/core_sharing.h"
#include "planning/link_class.h"
#include "planning/prediction.h"
#include "tests/layout/shared_cores_fixture.h"

namespace bubblescope::layout {
namespace {

constexpr double kMs = kFixtureMs;

// The fixture's layers measured at tp 2, tp's all-reduces 0.5 ms a call
// between ranks sharing the host's `cores` cores.
Calibration tpCalibration(int32_t cores) {
  Calibration c = sharedCoresCalibration(cores, /*opTp=*/2);
  c.links.push_back({"tp", kSharedCores, "allreduce", 2, 0.5 * kMs, 0.0, 1, 8, 8});
  return c;
}

Layout tpRun() { return tp2dp2(); }

double stepAt(const Calibration& c, double paid) {
  return predictLayout(tpRun(), withTpStretchPaid(c, paid)).value().stepNs;
}

TEST(TpStretchFit, PredictRecoversTheShareThatMadeTheStep) {
  const Calibration c = tpCalibration(2);
  for (double share : {0.1, 0.38, 0.9}) {
    auto fit = fitTpStretchPaid(tpRun(), c, stepAt(c, share));
    ASSERT_TRUE(fit.isOk()) << fit.status().message();
    EXPECT_NEAR(fit->paid, share, 1e-4) << share;
    EXPECT_DOUBLE_EQ(fit->predictedAtZeroNs, stepAt(c, 0));
    EXPECT_DOUBLE_EQ(fit->predictedAtOneNs, stepAt(c, 1));
  }
}

TEST(TpStretchFit, PredictARunOutsideTheModelsBoundsTakesTheBound) {
  const Calibration c = tpCalibration(2);
  auto slow = fitTpStretchPaid(tpRun(), c, 2 * stepAt(c, 1));
  ASSERT_TRUE(slow.isOk());
  EXPECT_EQ(slow->paid, 1.0);
  auto fast = fitTpStretchPaid(tpRun(), c, 0.5 * stepAt(c, 0));
  ASSERT_TRUE(fast.isOk());
  EXPECT_EQ(fast->paid, 0.0);
  // Stored, the share replaces an earlier one.
  const Calibration twice = withTpStretchPaid(withTpStretchPaid(c, 0.2), 0.7);
  int32_t entries = 0;
  for (const OpCostEntry& e : twice.ops) {
    if (e.part == kSharedCoresPart && e.op == kTpStretchPaidOp) {
      ++entries;
      EXPECT_EQ(e.wallNs, 0.7);
      EXPECT_EQ(e.cpuNs, 0.7);
    }
  }
  EXPECT_EQ(entries, 1);
}

TEST(TpStretchFit, PredictRefusesWhatItCannotFit) {
  const Calibration c = tpCalibration(2);
  Layout noTp = tpRun();
  noTp.tp = 1;
  noTp.dp = 4;
  auto r = fitTpStretchPaid(noTp, c, 100 * kMs);
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("the layout has no tp"), std::string::npos);
  for (double bad : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN(),
                     std::numeric_limits<double>::infinity()}) {
    r = fitTpStretchPaid(tpRun(), c, bad);
    ASSERT_FALSE(r.isOk()) << bad;
    EXPECT_NE(r.status().message().find("is not a finite number > 0"), std::string::npos);
  }
  // Cores enough for every rank: the share changes nothing.
  r = fitTpStretchPaid(tpRun(), tpCalibration(4), 100 * kMs);
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("do not share cores"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace bubblescope::layout
