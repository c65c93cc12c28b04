// CUDA launch statistics (launch_stats.h, HTA's cuda_kernel_launch_stats) and
// the launch table they read (launch_table.h), on hand-made launches.
#include "storage/analysis/launch_stats.h"

#include <gtest/gtest.h>

#include "storage/analysis/launch_table.h"

namespace bubblescope::analysis {
namespace {

TEST(LaunchStatsAnalysis, DelayIsStartMinusTheCallsEndClippedAtZero) {
  LaunchStatsBuilder b;
  // Calls of 10 ns; delays 0 (clipped from -5), 5, 15, 40 ns.
  b.add({1, 100, 110, true}, 105, 200);  // starts inside the call: delay 0
  b.add({2, 200, 210, true}, 215, 220);  // 5; runs 5 ns < its call's 10: short
  b.add({3, 300, 310, true}, 325, 400);  // 15
  b.add({4, 400, 410, true}, 450, 459);  // 40; 9 ns: short
  const auto s = b.finish();
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->launches, 4);
  EXPECT_EQ(s->delayP50Ns, 5);   // sorted 0, 5, 15, 40: ceil(2) = 2nd
  EXPECT_EQ(s->delayP95Ns, 40);  // ceil(3.8) = 4th
  EXPECT_EQ(s->delayMaxNs, 40);
  EXPECT_DOUBLE_EQ(s->delayMeanNs, 15.0);  // (0 + 5 + 15 + 40) / 4
  EXPECT_EQ(s->shorterThanLaunch, 2);
}

TEST(LaunchStatsAnalysis, EqualDurationIsNotShorter) {
  LaunchStatsBuilder b;
  b.add({1, 0, 10, true}, 20, 30);  // 10 ns against a 10 ns call
  EXPECT_EQ(b.finish()->shorterThanLaunch, 0);
}

TEST(LaunchStatsAnalysis, NothingAddedIsUnknown) {
  LaunchStatsBuilder b;
  EXPECT_FALSE(b.finish().has_value());
}

TEST(LaunchStatsAnalysis, HtaReadsKernelAndAsyncCopyLaunchesOnly) {
  EXPECT_TRUE(isHtaLaunchCall("cudaLaunchKernel"));
  EXPECT_TRUE(isHtaLaunchCall("cudaLaunchKernelExC"));
  EXPECT_TRUE(isHtaLaunchCall("cudaMemcpyAsync"));
  EXPECT_TRUE(isHtaLaunchCall("cudaMemsetAsync"));
  EXPECT_FALSE(isHtaLaunchCall("cudaMemcpy"));
  EXPECT_FALSE(isHtaLaunchCall("cuLaunchKernel"));
  EXPECT_FALSE(isHtaLaunchCall("cudaStreamSynchronize"));
}

TEST(LaunchTableAnalysis, FindsByCorrelationInAnyOrderFirstCallWins) {
  LaunchTable t;
  t.add({10, 100, 110, true});
  t.add({30, 300, 310, true});
  t.add({20, 200, 210, false});  // out of order: inserted
  t.add({20, 999, 999, true});   // a second call with id 20: ignored
  EXPECT_EQ(t.size(), 3u);
  ASSERT_NE(t.find(20), nullptr);
  EXPECT_EQ(t.find(20)->startNs, 200);
  EXPECT_FALSE(t.find(20)->htaLaunch);
  EXPECT_EQ(t.find(30)->endNs, 310);
  EXPECT_EQ(t.find(15), nullptr);
  EXPECT_EQ(t.find(40), nullptr);
}

// merge(): the pairs of both builders, as if added to one.
TEST(LaunchStatsAnalysis, MergeTakesBothBuildersPairs) {
  LaunchStatsBuilder a, later;
  a.add({1, 100, 110, true}, 105, 200);    // delay 0
  later.add({2, 200, 210, true}, 215, 220);  // 5; short
  later.add({3, 300, 310, true}, 325, 400);  // 15
  a.merge(std::move(later));
  const auto s = a.finish();
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->launches, 3);
  EXPECT_EQ(s->delayP50Ns, 5);
  EXPECT_EQ(s->delayMaxNs, 15);
  EXPECT_EQ(s->shorterThanLaunch, 1);
  EXPECT_FALSE(later.finish().has_value()) << "merged away";
}

}  // namespace
}  // namespace bubblescope::analysis
