// The process's host clock: the source decision's pieces, and that what it
// reads is CLOCK_MONOTONIC's nanoseconds (whichever source this machine has).
#include <gtest/gtest.h>

#include "tracer/clock.h"

namespace bubblescope::tracer {
namespace {

TEST(HostClockTest, CpuinfoNeedsBothStableTscFlagsAsWholeWords) {
  EXPECT_TRUE(
      cpuinfoSaysStableTsc("processor\t: 0\nflags\t\t: fpu tsc constant_tsc nonstop_tsc\n"));
  EXPECT_TRUE(cpuinfoSaysStableTsc("flags : nonstop_tsc x constant_tsc"));
  EXPECT_FALSE(cpuinfoSaysStableTsc("flags\t\t: fpu tsc constant_tsc\n"));
  EXPECT_FALSE(cpuinfoSaysStableTsc("flags\t\t: fpu nonstop_tsc_x constant_tsc\n"));
  EXPECT_FALSE(cpuinfoSaysStableTsc("model name : constant_tsc nonstop_tsc\n"));
  EXPECT_FALSE(cpuinfoSaysStableTsc(""));
}

TEST(HostClockTest, ReadsMonotonicNanosecondsWithinTheStatedDeviation) {
  const HostClockInfo info = hostClockInfo();
  if (info.source == ClockSource::kTsc) {
    EXPECT_GT(info.ticksPerNs, 0.01);
    EXPECT_LT(info.ticksPerNs, 100.0);
  }
  // Host reads bracketed by reference reads: within the deviation bound
  // (kResetNs: a larger one is re-anchored), in either order of reads.
  for (int i = 0; i < 1000; ++i) {
    const int64_t before = monotonicNowNs();
    const int64_t host = hostNowNs();
    const int64_t after = monotonicNowNs();
    ASSERT_GE(host, before - kResetNs);
    ASSERT_LE(host, after + kResetNs);
  }
  const ClockCheck check = recheckHostClock();
  EXPECT_LE(check.deviationNs, kResetNs);
  EXPECT_GE(check.deviationNs, -kResetNs);
  int64_t last = hostNowNs();
  for (int i = 0; i < 100000; ++i) {
    const int64_t now = hostNowNs();
    ASSERT_GE(now, last);
    last = now;
  }
}

}  // namespace
}  // namespace bubblescope::tracer
