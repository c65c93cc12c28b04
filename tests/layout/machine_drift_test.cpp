// The machine's drift while a calibration was taken (planning/machine_drift.h):
// stored once, read back, and said by a prediction only beyond the
// threshold.
#include "planning/machine_drift.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>

#include "planning/contention.h"
#include "planning/prediction.h"
#include "tests/layout/shared_cores_fixture.h"

namespace bubblescope::layout {
namespace {

// Layers of a known cost; cores unknown (no sharing).
Calibration layers() { return sharedCoresCalibration(0); }

bool says(const Prediction& p, const std::string& text) {
  return std::any_of(p.warnings.begin(), p.warnings.end(),
                     [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

TEST(MachineDrift, PredictStoresOneDriftAndReadsItBack) {
  Calibration c = layers();
  EXPECT_FALSE(recordedMachineDrift(c));
  c = withMachineDrift(withMachineDrift(c, 0.2), -0.07);
  ASSERT_TRUE(recordedMachineDrift(c));
  EXPECT_EQ(*recordedMachineDrift(c), -0.07);
  EXPECT_EQ(std::count_if(c.ops.begin(), c.ops.end(),
                          [](const OpCostEntry& e) {
                            return e.part == kContentionPart && e.op == kMachineDriftOp;
                          }),
            1);
  EXPECT_FALSE(recordedMachineDrift(
      withMachineDrift(c, std::numeric_limits<double>::quiet_NaN())));
}

TEST(MachineDrift, PredictionsFromADriftingCalibrationSaySo) {
  Layout l;
  l.microBatches = 2;
  auto steady = predictLayout(l, withMachineDrift(layers(), 0.04));
  ASSERT_TRUE(steady.isOk());
  EXPECT_FALSE(says(*steady, "calibrate again when the machine is steady"));
  auto slower = predictLayout(l, withMachineDrift(layers(), 0.123));
  ASSERT_TRUE(slower.isOk());
  EXPECT_TRUE(says(*slower,
                   "the machine ran the calibration's speed reference 12.3% slower at its end "
                   "than at its start: a prediction from it is as uncertain as that; calibrate "
                   "again when the machine is steady"))
      << (slower->warnings.empty() ? "" : slower->warnings.back());
  auto faster = predictLayout(l, withMachineDrift(layers(), -0.06));
  ASSERT_TRUE(faster.isOk());
  EXPECT_TRUE(says(*faster, "6.0% faster at its end than at its start"));
  // The drift is said, not applied: the step is the steady one's.
  EXPECT_DOUBLE_EQ(slower->stepNs, steady->stepNs);
}

}  // namespace
}  // namespace bubblescope::layout
