// RankStepAnalyzer: steps finish (and free their intervals) as soon as an
// event starts after them; spans crossing a step boundary are clipped.
#include "storage/analysis/rank_step_analyzer.h"

#include <gtest/gtest.h>

#include "tests/analysis/trace_builder.h"

namespace bubblescope::analysis {
namespace {

using testing::span;
using trace_model::EventKind;
using trace_model::ParallelDim;

TEST(RankStepAnalyzerTest, FinishesStepsWhileStreaming) {
  RankStepAnalyzer a(5, {{0, 0, 10}, {1, 10, 20}, {2, 20, 30}});
  a.add(span(5, EventKind::kForward, 0, 4));
  EXPECT_TRUE(a.takeFinished().empty());
  // Crosses into step 1: 2 ns in step 0, 3 ns in step 1; bytes go to step 0.
  a.add(span(5, EventKind::kAllReduce, 8, 13, -1, ParallelDim::kDp, 100));
  EXPECT_TRUE(a.takeFinished().empty());
  a.add(span(5, EventKind::kBackward, 12, 15));
  const auto first = a.takeFinished();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].rank, 5);
  EXPECT_EQ(first[0].step, 0);
  EXPECT_EQ(first[0].computeNs, 4);
  EXPECT_EQ(first[0].commNs, 2);
  EXPECT_EQ(first[0].idleNs, 4);
  EXPECT_EQ(first[0].commBytesByDim[1], 100);
  EXPECT_EQ(first[0].commVolumeByDim[1], 200);
  EXPECT_EQ(first[0].lastCollectiveStartNs, 8);
  const auto rest = a.finish();
  ASSERT_EQ(rest.size(), 2u);
  EXPECT_EQ(rest[0].step, 1);
  EXPECT_EQ(rest[0].commNs, 3);
  EXPECT_EQ(rest[0].computeNs, 3);
  EXPECT_EQ(rest[0].overlapNs, 1);  // [12, 13)
  EXPECT_EQ(rest[0].commBytesByDim[1], 0);
  EXPECT_EQ(rest[0].idleNs, 10 - 5);
  EXPECT_EQ(rest[1].step, 2);
  EXPECT_EQ(rest[1].idleNs, 10);
  EXPECT_EQ(rest[1].lastCollectiveStartNs, -1);
}

TEST(RankStepAnalyzerTest, EventsOutsideEveryStepAreIgnored) {
  RankStepAnalyzer a(0, {{3, 100, 200}});
  a.add(span(0, EventKind::kForward, 0, 50));
  a.add(span(0, EventKind::kWait, 150, 260));
  a.add(span(0, EventKind::kForward, 300, 400));
  const auto steps = a.finish();
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].step, 3);
  EXPECT_EQ(steps[0].stepNs, 100);
  EXPECT_EQ(steps[0].computeNs, 0);
  EXPECT_EQ(steps[0].waitNs, 50);
  EXPECT_EQ(steps[0].idleNs, 50);
}

}  // namespace
}  // namespace bubblescope::analysis
