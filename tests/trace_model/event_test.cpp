#include "trace_model/event.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace bubblescope::trace_model {
namespace {

// The stored values are a file-format contract: changing one breaks old traces.
TEST(EventModelTest, EnumValuesAreStable) {
  EXPECT_EQ(static_cast<int>(EventKind::kForward), 0);
  EXPECT_EQ(static_cast<int>(EventKind::kWait), 12);
  EXPECT_EQ(static_cast<int>(EventKind::kReduce), 19);
  EXPECT_EQ(static_cast<int>(ParallelDim::kZero), 4);
  EXPECT_EQ(static_cast<int>(gpuStreamLane(3)), 19);
}

TEST(EventModelTest, CategoriesFollowTheMetricDefinitions) {
  EXPECT_EQ(categoryOf(EventKind::kForward), EventCategory::kCompute);
  EXPECT_EQ(categoryOf(EventKind::kBackwardWeight), EventCategory::kCompute);
  EXPECT_EQ(categoryOf(EventKind::kAllReduce), EventCategory::kCommunication);
  EXPECT_EQ(categoryOf(EventKind::kRecv), EventCategory::kCommunication);
  // A bubble must never hide inside a receive: waiting is its own category.
  EXPECT_EQ(categoryOf(EventKind::kWait), EventCategory::kWait);
}

TEST(EventModelTest, EveryKindHasADistinctName) {
  std::set<std::string> names;
  for (int32_t k = 0; k < kEventKindCount; ++k) {
    auto kind = static_cast<EventKind>(k);
    ASSERT_TRUE(isValid(kind));
    names.insert(std::string(toString(kind)));
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(kEventKindCount));
  EXPECT_FALSE(isValid(static_cast<EventKind>(kEventKindCount)));
  EXPECT_EQ(toString(gpuStreamLane(0)), "gpu");
}

}  // namespace
}  // namespace bubblescope::trace_model
