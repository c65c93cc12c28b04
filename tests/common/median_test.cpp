// median(): the middle of odd samples, the mean of the two middles of even
// ones, whatever the order; 0 for none.
#include "common/median.h"

#include <gtest/gtest.h>

namespace bubblescope {
namespace {

TEST(MedianTest, OddSamplesGiveTheirMiddleValue) {
  EXPECT_EQ(median({5.0}), 5.0);
  EXPECT_EQ(median({9.0, 1.0, 4.0}), 4.0);
  EXPECT_EQ(median({3.0, 100.0, -2.0, 7.0, 3.5}), 3.5);
}

TEST(MedianTest, EvenSamplesGiveTheMeanOfTheTwoMiddles) {
  EXPECT_EQ(median({4.0, 1.0}), 2.5);
  EXPECT_EQ(median({10.0, 2.0, 8.0, 4.0}), 6.0);  // not the upper middle (8) nor the lower (4)
}

TEST(MedianTest, NoSampleIsZero) {
  EXPECT_EQ(median({}), 0.0);
}

}  // namespace
}  // namespace bubblescope
