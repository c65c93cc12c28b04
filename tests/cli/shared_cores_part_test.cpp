// What a shared-cores calibration run contributes (cli/calibrate_benchmark.h,
// sharedCoresPart): a dp run all of it, the tp 2 x dp C run its tp fits only
// and the dp C x pp 2 run its pp fits only (their dp fits at group C would
// stand beside the dp 2C runs' and their stragglers replace theirs).
#include <gtest/gtest.h>

#include "cli/calibrate_benchmark.h"

namespace bubblescope::cli {
namespace {

TEST(PredictSharedCoresPart, TheTpAndPpRunsGiveTheirOwnDimensionsFitsOnly) {
  layout::Calibration dp;
  dp.links.push_back({"dp", "same_host", "allreduce", 4, 1e6, 0.5, 8, 8, 1 << 20});
  dp.ops.push_back({"step", "straggler", 0, 1, 1.1, 1.1, 2});
  const layout::Calibration keptDp = sharedCoresPart(dp);
  EXPECT_EQ(keptDp.links, dp.links);
  EXPECT_EQ(keptDp.ops, dp.ops);

  layout::Calibration tp = dp;
  tp.links.push_back({"tp", "same_host", "allreduce", 2, 2e6, 0.0, 64, 8, 1 << 17});
  const layout::Calibration keptTp = sharedCoresPart(tp);
  ASSERT_EQ(keptTp.links.size(), 1u);
  EXPECT_EQ(keptTp.links[0].dim, "tp");
  EXPECT_TRUE(keptTp.ops.empty());

  // The dp C x pp 2 run: its pipeline fits (the transfer, a blocked
  // receive's wake-up) only.
  layout::Calibration pp = dp;
  pp.links.push_back({"pp", "same_host", "p2p", 2, 0, 0.4, 32, 1 << 17, 1 << 17});
  pp.links.push_back({"pp", "same_host", layout::kReceiveWake, 2, 1.4e6, 0, 30, 1 << 17, 1 << 17});
  const layout::Calibration keptPp = sharedCoresPart(pp);
  ASSERT_EQ(keptPp.links.size(), 2u);
  EXPECT_EQ(keptPp.links[0].dim, "pp");
  EXPECT_EQ(keptPp.links[1].collective, layout::kReceiveWake);
  EXPECT_TRUE(keptPp.ops.empty());
}

}  // namespace
}  // namespace bubblescope::cli
