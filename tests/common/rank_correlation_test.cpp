// Spearman's rank correlation (common/rank_correlation.h): the worked
// cases below follow from rho = 1 - 6 sum d^2 / (n (n^2 - 1)) without ties.
#include "common/rank_correlation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace bubblescope {
namespace {

TEST(RankCorrelation, SameOrderIsOneReversedIsMinusOne) {
  EXPECT_DOUBLE_EQ(spearmanRho({1, 2, 3, 4, 5}, {10, 20, 30, 40, 500}), 1.0);
  EXPECT_DOUBLE_EQ(spearmanRho({1, 2, 3, 4, 5}, {5, 4, 3, 2, 1}), -1.0);
}

TEST(RankCorrelation, MatchesTheSumOfSquaredRankDifferences) {
  // Ranks (1 2 3 4 5) against (3 4 1 5 2): sum d^2 = 4 + 4 + 4 + 1 + 9 = 22,
  // rho = 1 - 6 * 22 / 120 = -0.1.
  EXPECT_NEAR(spearmanRho({5, 4, 3, 2, 1}, {3, 2, 5, 1, 4}), -0.1, 1e-12);
  // (1 2 3 4 5) against (1 3 2 4 5): sum d^2 = 2, rho = 0.9.
  EXPECT_NEAR(spearmanRho({1, 2, 3, 4, 5}, {1, 3, 2, 4, 5}), 0.9, 1e-12);
}

TEST(RankCorrelation, TiesTakeTheirMeanRank) {
  EXPECT_EQ(averageRanks({7, 3, 7, 1}), (std::vector<double>{3.5, 2, 3.5, 1}));
  // Ranks (1, 2.5, 2.5) against (1, 2, 3): Pearson = 1.5 / sqrt(1.5 * 2).
  EXPECT_NEAR(spearmanRho({1, 2, 2}, {1, 2, 3}), 1.5 / std::sqrt(3.0), 1e-12);
}

TEST(RankCorrelation, NoOrderToCompareIsNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(std::isnan(spearmanRho({1}, {1})));
  EXPECT_TRUE(std::isnan(spearmanRho({1, 2}, {1, 2, 3})));
  EXPECT_TRUE(std::isnan(spearmanRho({2, 2, 2}, {1, 2, 3})));
  EXPECT_TRUE(std::isnan(spearmanRho({1, nan, 3}, {1, 2, 3})));
}

}  // namespace
}  // namespace bubblescope
