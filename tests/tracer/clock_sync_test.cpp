#include "tracer/clock_sync.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace bubblescope::tracer {
namespace {

// Rounds between a rank whose clock reads true + offset and rank 0, with
// asymmetric random delays; a few rounds are badly disturbed.
std::vector<PingPong> simulateRounds(int64_t offsetNs, int64_t startNs, int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> leg(1000, 3000);
  std::vector<PingPong> rounds;
  int64_t t = startNs;
  for (int i = 0; i < n; ++i) {
    const int64_t out = leg(rng) + (i % 7 == 3 ? 500000 : 0);
    const int64_t back = leg(rng);
    PingPong p;
    p.sendNs = t + offsetNs;
    p.refNs = t + out;
    p.receiveNs = t + out + back + offsetNs;
    rounds.push_back(p);
    t += 100000;
  }
  return rounds;
}

TEST(ClockSyncTest, EstimatesAKnownOffsetWithinItsUncertainty) {
  for (int64_t offset : {int64_t{0}, int64_t{123456789}, int64_t{-987654321}}) {
    auto rounds = simulateRounds(offset, 1000000000, 64, 7);
    auto e = estimateOffset(rounds);
    ASSERT_TRUE(e.isOk());
    // The estimate is ref - local, i.e. minus the rank's offset.
    EXPECT_LE(std::llabs(e->offsetNs + offset), e->uncertaintyNs) << offset;
    EXPECT_LE(e->uncertaintyNs, 3000);
    EXPECT_GT(e->uncertaintyNs, 0);
  }
}

TEST(ClockSyncTest, DisturbedRoundsAreIgnored) {
  // Only the fastest rounds count: a 0.5 ms one-way stall must not leak in.
  auto rounds = simulateRounds(0, 0, 64, 11);
  auto e = estimateOffset(rounds, 0.25);
  ASSERT_TRUE(e.isOk());
  EXPECT_LT(std::llabs(e->offsetNs), 2000);
}

TEST(ClockSyncTest, RejectsNoRoundsAndTimeTravel) {
  EXPECT_FALSE(estimateOffset({}).isOk());
  PingPong bad{100, 50, 90};
  auto e = estimateOffset(std::span<const PingPong>(&bad, 1));
  ASSERT_FALSE(e.isOk());
  EXPECT_EQ(e.status().message(), "clock sync: an answer arrived before its request was sent");
}

// Local clock = true + 1 ms + 100 ppm * true.
int64_t localOf(int64_t t) {
  return t + 1000000 + static_cast<int64_t>(1e-4 * static_cast<double>(t));
}

OffsetEstimate exactAt(int64_t t, int64_t uncertaintyNs, int64_t errorNs = 0) {
  return {localOf(t), t - localOf(t) + errorNs, uncertaintyNs};
}

TEST(ClockSyncTest, TrackCorrectsOffsetAndDriftBetweenEstimates) {
  ClockTrack track;
  track.add(exactAt(0, 50));
  EXPECT_EQ(track.toReference(localOf(0)), 0);
  // One estimate: its offset, held (the drift is not known yet).
  EXPECT_EQ(track.toReference(localOf(1000000000)), localOf(1000000000) - localOf(0));
  track.add(exactAt(4000000000LL, 70));
  track.add(exactAt(10000000000LL, 30));
  EXPECT_EQ(track.estimates().size(), 3u);
  EXPECT_EQ(track.uncertaintyNs(), 140);
  for (int64_t t : {int64_t{0}, int64_t{2500000000}, int64_t{7000000000}, int64_t{10000000000}}) {
    EXPECT_NEAR(static_cast<double>(track.toReference(localOf(t))), static_cast<double>(t), 2.0)
        << t;
  }
  // Past the last estimate the last segment's line goes on.
  EXPECT_NEAR(static_cast<double>(track.toReference(localOf(12000000000LL))), 12e9, 2.0);
}

TEST(ClockSyncTest, TrackErrorBetweenTwoEstimatesIsWithinTheirUncertainty) {
  ClockTrack track;
  track.add(exactAt(0, 400, +400));
  track.add(exactAt(100000000, 300, -300));  // 10 us of drift: more than noise
  for (int64_t t = 0; t <= 100000000; t += 12500000) {
    const int64_t error = track.toReference(localOf(t)) - t;
    EXPECT_LE(std::llabs(error), 401) << t;
  }
}

TEST(ClockSyncTest, TrackTakesNoDriftFromNoiseSoDurationsKeep) {
  // Equal clocks measured with errors +300 and -300 (each within 400): the
  // difference is noise, so the map is one offset and durations are exact.
  auto at = [](int64_t t, int64_t errorNs) { return OffsetEstimate{t, errorNs, 400}; };
  ClockTrack track;
  track.add(at(0, +300));
  track.add(at(50000000, -300));
  const int64_t a = track.toReference(20000000), b = track.toReference(20030000);
  EXPECT_EQ(b - a, 30000);
  EXPECT_LE(std::llabs(a - 20000000), track.uncertaintyNs());
}

TEST(ClockSyncTest, TrackKeepsATightEstimateOverALooseOne) {
  // True offset 0: a tight estimate (+10 +- 15 us) and a loose one measured
  // on a busy core (+400 us +- 8 ms). Their mean would be 205 us off; the
  // middle of their intervals' intersection stays within the tight bound.
  ClockTrack track;
  track.add(OffsetEstimate{0, 10000, 15000});
  track.add(OffsetEstimate{50000000, 400000, 8000000});
  for (int64_t t = 0; t <= 50000000; t += 10000000) {
    EXPECT_LE(std::llabs(track.toReference(t) - t), 15000) << t;
  }
}

TEST(ClockSyncTest, TrackGrowsAShortSegmentInsteadOfFittingOverIt) {
  ClockTrack track;
  for (int64_t t : {int64_t{0}, int64_t{100000000}, int64_t{200000000}, int64_t{1200000000}}) {
    track.add(exactAt(t, 10));
  }
  ASSERT_EQ(track.estimates().size(), 2u);  // [0, 1.2 s]: 0.1 s and 0.2 s were replaced
  EXPECT_EQ(track.estimates().back().atNs, localOf(1200000000));
  track.add(exactAt(1300000000, 10));  // the segment is a second long: a new one starts
  EXPECT_EQ(track.estimates().size(), 3u);
}

TEST(ClockSyncTest, TrackIgnoresAnEstimateThatIsNotLater) {
  ClockTrack track;
  track.add(exactAt(1000, 10));
  track.add(exactAt(1000, 99999, 5000000));
  track.add(exactAt(0, 99999, 5000000));
  EXPECT_EQ(track.estimates().size(), 1u);
  EXPECT_EQ(track.uncertaintyNs(), 10);
}

}  // namespace
}  // namespace bubblescope::tracer
