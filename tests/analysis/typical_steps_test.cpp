// typicalSteps(): hiccups out, by the step times alone.
#include "storage/analysis/typical_steps.h"

#include <gtest/gtest.h>

#include <cmath>

namespace bubblescope::analysis {
namespace {

TEST(TypicalSteps, AHiccupIsLeftOutAndAStepWithoutATimeIsKept) {
  // Median 100, MAD 2: the limit is 100 + max(3 x 1.4826 x 2, 5) = 108.9.
  const std::map<int32_t, double> steps{{1, 98}, {2, 100}, {3, 102}, {4, 108}, {5, 109},
                                        {6, 0},  {7, std::nan("")}, {8, 100}, {9, 97}};
  EXPECT_EQ(typicalSteps(steps), (std::set<int32_t>{1, 2, 3, 4, 6, 7, 8, 9}));
  EXPECT_TRUE(typicalSteps({}).empty());
  // Two timed steps cannot say which one is odd.
  EXPECT_EQ(typicalSteps({{0, 100}, {1, 900}, {2, 0}}).size(), 3u);
}

}  // namespace
}  // namespace bubblescope::analysis
