// What a shared-cores calibration run contributes (cli/calibrate_benchmark.h,
// sharedCoresPart): a dp run all of it, the tp 2 x dp C run its tp fits only
// (its dp fits at group C would stand beside the dp 2C runs' and its
// straggler replace theirs).
#include <gtest/gtest.h>

#include "cli/calibrate_benchmark.h"

namespace bubblescope::cli {
namespace {

TEST(PredictSharedCoresPart, TheTpRunGivesItsTpFitsOnly) {
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
}

}  // namespace
}  // namespace bubblescope::cli
