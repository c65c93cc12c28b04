// The nearest-rank percentile (percentile.h): always one of the values, the
// rank ceil(p·n / 100) worked out here by hand.
#include "storage/analysis/percentile.h"

#include <gtest/gtest.h>

namespace bubblescope::analysis {
namespace {

TEST(PercentileAnalysis, NearestRankOfTwentyValues) {
  std::vector<int64_t> v;
  for (int64_t i = 1; i <= 20; ++i) v.push_back(i * 10);  // 10, 20, ..., 200
  EXPECT_EQ(percentileOf(v, 95), 190);                    // ceil(0.95 · 20) = 19th
  EXPECT_EQ(percentileOf(v, 50), 100);                    // ceil(0.5 · 20) = 10th
  EXPECT_EQ(percentileOf(v, 100), 200);
  EXPECT_EQ(percentileOf(v, 0), 10);  // the smallest
  EXPECT_EQ(percentileOf(v, 1), 10);  // ceil(0.2) = 1st
  EXPECT_EQ(percentileOf(v, 6), 20);  // ceil(1.2) = 2nd
}

TEST(PercentileAnalysis, SmallSetsTakeTheLargestForHighPercentiles) {
  EXPECT_EQ(percentileOf({7}, 95), 7);
  EXPECT_EQ(percentileOf({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 95), 10);  // ceil(9.5) = 10th
  EXPECT_EQ(percentileOf({1, 2, 3}, 50), 2);                         // ceil(1.5) = 2nd
  EXPECT_EQ(percentileOf({1, 2, 3, 4}, 50), 2);                      // ceil(2) = 2nd
}

TEST(PercentileAnalysis, OutOfRangePercentIsClamped) {
  EXPECT_EQ(percentileOf({1, 2, 3}, -5), 1);
  EXPECT_EQ(percentileOf({1, 2, 3}, 250), 3);
}

}  // namespace
}  // namespace bubblescope::analysis
