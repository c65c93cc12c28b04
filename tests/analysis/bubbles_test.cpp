// The one bubble definition the report and the timeline share.
#include "storage/analysis/bubbles.h"

#include <gtest/gtest.h>

namespace bubblescope::analysis {
namespace {

using trace_model::EventKind;
using trace_model::Interval;
using trace_model::IntervalSet;

TEST(BubblesTest, ComputeAndCommunicationAreBusyWaitAndDataAreNot) {
  EXPECT_TRUE(isBusy(EventKind::kForward));
  EXPECT_TRUE(isBusy(EventKind::kBackwardWeight));
  EXPECT_TRUE(isBusy(EventKind::kOptimizer));
  EXPECT_TRUE(isBusy(EventKind::kAllReduce));
  EXPECT_TRUE(isBusy(EventKind::kRecv));
  EXPECT_FALSE(isBusy(EventKind::kWait));
  EXPECT_FALSE(isBusy(EventKind::kDataLoad));
  EXPECT_FALSE(isBusy(EventKind::kOther));
}

TEST(BubblesTest, BubbleIsTheStepLessItsBusySpansClippedToTheStep) {
  const auto busy =
      IntervalSet::fromUnsorted({{-20, 10}, {15, 30}, {20, 25}, {50, 60}, {90, 120}, {200, 300}});
  const IntervalSet bubble = bubbleIntervals({3, 0, 100}, busy);
  EXPECT_EQ(bubble.intervals(), (std::vector<Interval>{{10, 15}, {30, 50}, {60, 90}}));
  EXPECT_EQ(bubble.totalNs(), 5 + 20 + 30);
}

TEST(BubblesTest, AnIdleStepIsOneBubbleAndABusyStepHasNone) {
  EXPECT_EQ(bubbleIntervals({0, 100, 200}, {}).intervals(), (std::vector<Interval>{{100, 200}}));
  const auto busy = IntervalSet::fromUnsorted({{100, 150}, {150, 200}});
  EXPECT_TRUE(bubbleIntervals({0, 100, 200}, busy).empty());
  EXPECT_TRUE(bubbleIntervals({0, 100, 100}, {}).empty());
}

}  // namespace
}  // namespace bubblescope::analysis
