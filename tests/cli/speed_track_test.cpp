// SpeedTrack (cli/speed_track.h): the reference step between and outside
// the references, their median, and the factor each run is scaled by.
#include "cli/speed_track.h"

#include <gtest/gtest.h>

#include <limits>

namespace bubblescope::cli {
namespace {

TEST(SpeedTrack, PredictInterpolatesBetweenReferencesAndHoldsOutsideThem) {
  SpeedTrack t;
  t.add(0.0, 100);
  t.add(3.5, 100);
  t.add(7.5, 140);
  t.add(11.5, 120);
  EXPECT_DOUBLE_EQ(t.at(-1), 100);
  EXPECT_DOUBLE_EQ(t.at(2), 100);
  EXPECT_DOUBLE_EQ(t.at(5.5), 120);   // halfway from 100 to 140
  EXPECT_DOUBLE_EQ(t.at(9.5), 130);   // halfway from 140 to 120
  EXPECT_DOUBLE_EQ(t.at(20), 120);
  EXPECT_DOUBLE_EQ(t.median(), 110);  // (100 + 120) / 2
  // A run where the reference took 130 ran slow: its costs shrink to 110's.
  EXPECT_DOUBLE_EQ(t.factor(9.5), 110.0 / 130.0);
  EXPECT_DOUBLE_EQ(t.factor(0), 1.1);
}

TEST(SpeedTrack, PredictAReferenceWithoutAStepScalesNothing) {
  SpeedTrack t;
  t.add(0.0, 0.0);
  EXPECT_DOUBLE_EQ(t.factor(0), 1.0);
  t.add(1.0, std::numeric_limits<double>::quiet_NaN());
  EXPECT_DOUBLE_EQ(t.factor(1), 1.0);
  SpeedTrack one;
  one.add(2.0, 50);
  EXPECT_DOUBLE_EQ(one.factor(0), 1.0);
  EXPECT_DOUBLE_EQ(one.factor(7), 1.0);
}

}  // namespace
}  // namespace bubblescope::cli
