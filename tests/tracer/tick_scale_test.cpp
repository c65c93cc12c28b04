// The TSC maths with fake tick and reference sources: ticks to ns, the
// calibration fit, the bracketed pair read, the drift check and the retune.
#include "tracer/tick_scale.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace bubblescope::tracer {
namespace {

// A fake counter at `ghz` ticks per ns whose rate is off by `ppm` from the
// reference: at reference time t it reads t × ghz × (1 + ppm·1e-6).
struct FakeCounter {
  double ghz = 2.5;
  double ppm = 0.0;
  int64_t ticksAt(int64_t ns) const {
    return static_cast<int64_t>(static_cast<double>(ns) * ghz * (1.0 + ppm * 1e-6));
  }
  TickPair pair(int64_t ns) const { return {ticksAt(ns), ns, 0}; }
};

TEST(TickScaleTest, ConvertsTicksToNsOnTheFittedLine) {
  const FakeCounter c;  // 2.5 ticks per ns: 0.4 ns per tick
  auto scale = fitTickScale(c.pair(1'000), c.pair(1'000'001'000));
  ASSERT_TRUE(scale.isOk()) << scale.status().toString();
  EXPECT_NEAR(scale->nsPerTick(), 0.4, 1e-9);
  EXPECT_EQ(scale->toNs(c.ticksAt(1'000'001'000)), 1'000'001'000);  // the anchor, exactly
  // One hour later and ten seconds earlier: within the fixed point's
  // rounding, half of 2^-32 ns per tick from the anchor (1 us an hour at
  // 2.5 GHz), plus the floor's 1 ns.
  const int64_t anchor = c.ticksAt(1'000'001'000);
  auto bound = [&](int64_t ticks) {
    return std::abs(static_cast<double>(ticks - anchor)) / 8589934592.0 + 1.0;
  };
  const int64_t hour = 3'600'000'000'000;
  EXPECT_NEAR(static_cast<double>(scale->toNs(c.ticksAt(hour))), static_cast<double>(hour),
              bound(c.ticksAt(hour)));
  EXPECT_NEAR(static_cast<double>(scale->toNs(c.ticksAt(-9'000'000'000))), -9e9,
              bound(c.ticksAt(-9'000'000'000)));
  // 25 ticks are 10 ns (a rate read upside down, 2.5 ns per tick, would give 62).
  EXPECT_NEAR(static_cast<double>(scale->toNs(anchor + 25) - scale->toNs(anchor)), 10.0, 1.0);
}

TEST(TickScaleTest, FitRefusesCountersThatDoNotCountTime) {
  EXPECT_FALSE(fitTickScale({100, 10, 0}, {100, 20, 0}).isOk());    // ticks stood still
  EXPECT_FALSE(fitTickScale({100, 10, 0}, {200, 10, 0}).isOk());    // reference stood still
  EXPECT_FALSE(fitTickScale({200, 10, 0}, {100, 20, 0}).isOk());    // ticks ran backwards
  EXPECT_FALSE(fitTickScale({0, 0, 0}, {1, 1'000'000, 0}).isOk());  // 1 ms per tick
  auto s = fitTickScale({0, 0, 0}, {10'000, 1'000'000'000, 0});
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.status().message().find("not a clock counter"), std::string::npos);
}

TEST(TickScaleTest, ReadsThePairWithTheNarrowestBracket) {
  // Reference reads: brackets of width 100, 10 (ticks 2) and 50.
  std::vector<int64_t> refs = {1000, 1100, 2000, 2010, 3000, 3050};
  std::vector<int64_t> ticks = {1, 2, 3};
  size_t r = 0, t = 0;
  const TickPair p = readTickPair([&] { return ticks[t++]; }, [&] { return refs[r++]; }, 3);
  EXPECT_EQ(p.ticks, 2);
  EXPECT_EQ(p.ns, 2005);
  EXPECT_EQ(p.errorNs, 5);
}

TEST(TickScaleTest, TheDriftCheckSeesARateErrorAndTheRetuneStopsItWithoutAJump) {
  // Calibrated over 2 ms on a counter that then turns out 10 ppm fast
  // against the reference (as a short calibration's read noise can make it).
  const FakeCounter calibrated{2.5, 0.0};
  auto scale = fitTickScale(calibrated.pair(0), calibrated.pair(2'000'000));
  ASSERT_TRUE(scale.isOk());
  const FakeCounter real{2.5, 10.0};
  const TickPair origin = real.pair(0);
  const TickPair atOneSecond = real.pair(1'000'000'000);
  // 10 ppm of a second: the scale runs 10 us ahead.
  const int64_t drift = deviationNs(*scale, atOneSecond);
  EXPECT_NEAR(static_cast<double>(drift), 10'000.0, 2.0);
  auto retuned = retuneTickScale(*scale, origin, atOneSecond);
  ASSERT_TRUE(retuned.isOk());
  // Continuous at the retune: no jump for spans that straddle it.
  EXPECT_EQ(retuned->toNs(atOneSecond.ticks), scale->toNs(atOneSecond.ticks));
  // The deviation stays an offset: a second later it has not grown, where
  // the old scale's would have doubled.
  const TickPair atTwoSeconds = real.pair(2'000'000'000);
  EXPECT_NEAR(static_cast<double>(deviationNs(*retuned, atTwoSeconds)), 10'000.0, 2.0);
  EXPECT_NEAR(static_cast<double>(deviationNs(*scale, atTwoSeconds)), 20'000.0, 2.0);
}

}  // namespace
}  // namespace bubblescope::tracer
