// The hang watchdog names the rank that hangs a job, from heartbeats.
#include "cli/hang_watchdog.h"

#include <gtest/gtest.h>

#include "cli/heartbeat.h"
#include "cli/parent_watch.h"

namespace bubblescope::cli {
namespace {

std::string beat(int rank, int64_t step) {
  return "bubblescope-heartbeat rank=" + std::to_string(rank) + " step=" + std::to_string(step);
}

TEST(HangWatchdogTest, ParsesOnlyHeartbeats) {
  HangWatchdog w(2, 1000);
  EXPECT_TRUE(w.scan(beat(1, 7), 0));
  EXPECT_FALSE(w.scan("step     3/10 | loss 4.1", 0));
  EXPECT_FALSE(w.scan("bubblescope-heartbeat nonsense", 0));
  const auto h = parseHeartbeat(beat(3, -1));
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->rank, 3);
  EXPECT_EQ(h->step, -1);
}

TEST(HangWatchdogTest, StartUpIsNotTimed) {
  HangWatchdog w(2, 1000);
  EXPECT_FALSE(w.check(1000000).has_value()) << "no heartbeat yet: nothing is watched";
}

TEST(HangWatchdogTest, ProgressKeepsItQuiet) {
  HangWatchdog w(2, 1000);
  for (int64_t t = 0; t <= 5000; t += 500) {
    w.scan(beat(0, t / 500), t);
    w.scan(beat(1, t / 500), t);
    EXPECT_FALSE(w.check(t).has_value()) << "at " << t << " ms";
  }
}

// Rank 1 stopped (SIGSTOP): it falls silent; rank 0 keeps beating but,
// blocked on rank 1, completes no step. Rank 1 is named, at the timeout.
TEST(HangWatchdogTest, NamesTheSilentRank) {
  HangWatchdog w(2, 1000);
  w.scan(beat(0, 4), 0);
  w.scan(beat(1, 5), 0);
  for (int64_t t = 500; t < 1000; t += 500) w.scan(beat(0, 5), t);
  EXPECT_FALSE(w.check(999).has_value());
  for (int64_t t = 1000; t <= 3000; t += 500) w.scan(beat(0, 5), t);
  const auto hang = w.check(3000);
  ASSERT_TRUE(hang.has_value());
  EXPECT_EQ(hang->rank, 1);
  EXPECT_EQ(hang->lastStep, 5);
  EXPECT_EQ(hang->stalledMs, 3000);
}

// Heartbeats come every 500 ms, so a waiting peer's last step can be seen
// before the stopped rank's: here rank 0 shows step 5 at 0 ms, rank 1 (then
// stopped) at 300 ms. Rank 0 reaches the timeout first, but rank 1 is named
// only once it has itself made no progress for the timeout, never "for 2 s
// (--hang-timeout 3)" (the flaky run_hang_test.sh under load).
TEST(HangWatchdogTest, NamesTheSilentRankOnlyOnceItHasStalledForTheTimeout) {
  HangWatchdog w(2, 3000);
  w.scan(beat(0, 4), -500);
  w.scan(beat(1, 4), -200);
  w.scan(beat(0, 5), 0);
  w.scan(beat(1, 5), 300);
  for (int64_t t = 500; t <= 3300; t += 500) w.scan(beat(0, 5), t);
  EXPECT_FALSE(w.check(3000).has_value()) << "rank 1 progressed 2.7 s ago";
  EXPECT_FALSE(w.check(3299).has_value());
  const auto hang = w.check(3300);
  ASSERT_TRUE(hang.has_value());
  EXPECT_EQ(hang->rank, 1);
  EXPECT_EQ(hang->lastStep, 5);
  EXPECT_EQ(hang->stalledMs, 3000);
}

// The rank behind keeps progressing while rank 0 is stuck (not a lockstep
// job): rank 0 is named once it has made no progress for twice the timeout.
TEST(HangWatchdogTest, NamesAStalledRankWhenTheRankBehindKeepsProgressing) {
  HangWatchdog w(2, 1000);
  for (int64_t t = 0; t <= 2000; t += 500) {
    w.scan(beat(0, 9), t);
    w.scan(beat(1, t / 500), t);
    if (t < 2000) {
      EXPECT_FALSE(w.check(t).has_value()) << "at " << t << " ms";
    }
  }
  const auto hang = w.check(2000);
  ASSERT_TRUE(hang.has_value());
  EXPECT_EQ(hang->rank, 0);
  EXPECT_EQ(hang->stalledMs, 2000);
  EXPECT_EQ(hang->lastStep, 9);
}

// A deadlock: every rank beats, none completes a step; the lowest step is named.
TEST(HangWatchdogTest, NamesTheRankBehindInADeadlock) {
  HangWatchdog w(3, 1000);
  for (int64_t t = 0; t <= 1500; t += 500) {
    w.scan(beat(0, 9), t);
    w.scan(beat(1, 8), t);
    w.scan(beat(2, 9), t);
  }
  const auto hang = w.check(1500);
  ASSERT_TRUE(hang.has_value());
  EXPECT_EQ(hang->rank, 1);
  EXPECT_EQ(hang->lastStep, 8);
}

// The trace collector (rank 2 of a 2-rank job) beats with step -1 and is
// judged on silence alone: beating, it is never named however long it shows
// no step; stopped, it is named once silent for the timeout while the ranks
// (whose spans it no longer takes) train on.
TEST(HangWatchdogTest, TheCollectorIsNamedWhenSilentOnly) {
  HangWatchdog w(2, 1000, /*watchCollector=*/true);
  for (int64_t t = 0; t <= 3000; t += 500) {
    w.scan(beat(0, t / 500), t);
    w.scan(beat(1, t / 500), t);
    EXPECT_TRUE(w.scan(beat(2, -1), t)) << "the collector's beat is consumed";
    EXPECT_FALSE(w.check(t).has_value()) << "a beating collector at " << t << " ms";
  }
  for (int64_t t = 3500; t <= 4000; t += 500) {
    w.scan(beat(0, t / 500), t);
    w.scan(beat(1, t / 500), t);
  }
  EXPECT_FALSE(w.check(3999).has_value()) << "silent for 999 ms";
  const auto hang = w.check(4000);
  ASSERT_TRUE(hang.has_value());
  EXPECT_TRUE(hang->collector);
  EXPECT_EQ(hang->rank, 2);
  EXPECT_EQ(hang->stalledMs, 1000);
}

// Without a collector to watch, rank worldSize's beats are ignored, and a
// rank's hang is named before a silent collector.
TEST(HangWatchdogTest, RanksComeBeforeTheCollector) {
  HangWatchdog untraced(2, 1000);
  untraced.scan(beat(0, 1), 0);
  untraced.scan(beat(1, 1), 0);
  untraced.scan(beat(2, -1), 0);
  for (int64_t t = 500; t <= 2000; t += 500) {
    untraced.scan(beat(0, 1 + t / 500), t);
    untraced.scan(beat(1, 1 + t / 500), t);
  }
  EXPECT_FALSE(untraced.check(2000).has_value());

  HangWatchdog w(2, 1000, /*watchCollector=*/true);
  w.scan(beat(0, 3), 0);
  w.scan(beat(1, 3), 0);
  w.scan(beat(2, -1), 0);
  for (int64_t t = 500; t <= 2000; t += 500) w.scan(beat(0, 3), t);
  const auto hang = w.check(2000);  // rank 1 and the collector silent for 2 s
  ASSERT_TRUE(hang.has_value());
  EXPECT_FALSE(hang->collector);
  EXPECT_EQ(hang->rank, 1);
}

TEST(HangWatchdogTest, ZeroTimeoutIsOff) {
  HangWatchdog w(1, 0);
  w.scan(beat(0, 1), 0);
  EXPECT_FALSE(w.check(1000000).has_value());
}

TEST(HangWatchdogTest, LastProgressIsTheSpanElseTheStepElseNone) {
  EXPECT_EQ(lastProgressText("block.3 backward (step 4, micro-batch 1)", 4),
            "block.3 backward (step 4, micro-batch 1)");
  EXPECT_EQ(lastProgressText("", 7), "after step 7");
  EXPECT_EQ(lastProgressText("", 0), "after step 0");
  // Never "after step -1": a rank stopped before any heartbeat or span was seen.
  EXPECT_EQ(lastProgressText("", -1), "none yet (it reported no completed step)");
}

TEST(ParentWatchTest, LauncherArgumentRoundTrips) {
  const storage::ProcessIdentity p{"node-1:a", 4242, 987654};
  auto parsed = parseLauncherArgument(launcherArgument(p));
  ASSERT_TRUE(parsed.isOk()) << parsed.status().message();
  EXPECT_EQ(parsed->host, "node-1:a");
  EXPECT_EQ(parsed->pid, 4242);
  EXPECT_EQ(parsed->startTicks, 987654);
  EXPECT_FALSE(parseLauncherArgument("nohost").isOk());
  EXPECT_FALSE(parseLauncherArgument("h:x:1").isOk());
}

}  // namespace
}  // namespace bubblescope::cli
