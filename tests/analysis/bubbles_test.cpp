// The one bubble definition the report and the timeline share.
#include "storage/analysis/bubbles.h"

#include "storage/analysis/gpu_time_analyzer.h"

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

// On a GPU stream busy is what the GPU time analysis counts (HTA: kernels,
// collectives, memcpy and memset); every other lane keeps isBusy(kind), so a
// CPU engine's bubbles do not change.
TEST(BubblesTest, OnAGpuStreamCopiesAndSetsAreBusyAsTheGpuTimeAnalysisCountsThem) {
  using trace_model::Lane;
  const Lane stream = trace_model::gpuStreamLane(7);
  for (int k = 0; k < trace_model::kEventKindCount; ++k) {
    const auto kind = static_cast<EventKind>(k);
    SCOPED_TRACE(k);
    EXPECT_EQ(isBusy(stream, kind), isCountedGpuRecord(stream, kind));
    for (Lane lane : {Lane::kCompute, Lane::kCommunication, Lane::kPipeline, Lane::kData,
                      Lane::kCudaApi, trace_model::hostThreadLane(0)}) {
      EXPECT_EQ(isBusy(lane, kind), isBusy(kind));
    }
  }
  EXPECT_TRUE(isBusy(stream, EventKind::kMemcpy));
  EXPECT_TRUE(isBusy(stream, EventKind::kMemset));
  EXPECT_TRUE(isBusy(stream, EventKind::kKernel));
  EXPECT_TRUE(isBusy(stream, EventKind::kAllReduce));
  EXPECT_FALSE(isBusy(stream, EventKind::kOther));
  EXPECT_FALSE(isBusy(EventKind::kMemset)) << "off a GPU stream a memset counts nowhere, as before";
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
