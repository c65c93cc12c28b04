// Ranks that time-share a host's cores (planning/core_sharing.h, issue 35
// point 1): what calibrate's shared-cores run adds to a calibration, and how
// a prediction of more ranks than cores uses it. Costs are made up so every
// expected step follows from the model by hand.
#include "planning/core_sharing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "planning/link_class.h"
#include "planning/prediction.h"
#include "planning/tp_stretch_fit.h"
#include "tests/layout/shared_cores_fixture.h"

namespace bubblescope::layout {
namespace {

constexpr double kMs = kFixtureMs;

Calibration sharedCalibration(int32_t cores) { return sharedCoresCalibration(cores); }

TEST(PredictSharedCores, TheSharedRunAddsItsFitsAsSharedCoresAndItsStraggler) {
  Calibration alone = sharedCalibration(2);
  alone.links.pop_back();  // no shared_cores fit yet
  Calibration shared;
  shared.cores = 2;
  shared.ranksPerHost = 4;
  shared.links.push_back({"dp", kSameHost, "allreduce", 4, 3 * kMs, 0.5, 8, 8, 1 << 20});
  shared.ops.push_back({"step", "straggler", 0, 1, 1.25, 1.1, 2});
  const Calibration out = withSharedCores(alone, shared);
  ASSERT_EQ(out.links.size(), alone.links.size() + 1);
  const LinkFit& f = out.links.back();
  EXPECT_EQ(f.link, kSharedCores);
  EXPECT_EQ(f.dim, "dp");
  EXPECT_EQ(f.groupSize, 4);
  EXPECT_DOUBLE_EQ(f.alphaNs, 3 * kMs);
  EXPECT_DOUBLE_EQ(f.betaNsPerByte, 0.5);
  // The calibration stays one of ranks with a core each.
  EXPECT_FALSE(out.oversubscribed());
  EXPECT_DOUBLE_EQ(out.stragglerFactor(false), 1.0);
  const CoreSharing s = coreSharingOf({"", "", "", ""}, out);
  EXPECT_EQ(s.ranks, 4);
  EXPECT_DOUBLE_EQ(s.ratio, 2.0);
  ASSERT_TRUE(s.straggler.has_value());
  EXPECT_DOUBLE_EQ(*s.straggler, 1.25);
  // Its wall column even for costs in thread CPU time (1.1 there): the
  // ranks' unfair turns on the cores are not in their CPU time.
  PredictOptions quiet;
  quiet.background = 0;
  Layout dp4;
  dp4.dp = 4;
  auto wall = predictLayout(dp4, out), cpu = predictLayout(dp4, out, quiet);
  ASSERT_TRUE(wall.isOk() && cpu.isOk());
  EXPECT_NEAR(cpu->stepNs, wall->stepNs, 1e-6 * wall->stepNs);
  // Twice: the entries are replaced, not repeated.
  const Calibration again = withSharedCores(out, shared);
  EXPECT_EQ(again.links.size(), out.links.size());
  EXPECT_EQ(std::count_if(again.ops.begin(), again.ops.end(),
                          [](const OpCostEntry& e) { return e.part == kSharedCoresPart; }),
            1);
  // A run with a core per rank measured nothing of sharing.
  shared.ranksPerHost = 2;
  const Calibration unchanged = withSharedCores(alone, shared);
  EXPECT_EQ(unchanged.links, alone.links);
  EXPECT_EQ(unchanged.ops, alone.ops);
}

TEST(PredictSharedCores, NoSharingWhenTheCoresSufficeOrAreUnknown) {
  Calibration c = sharedCalibration(4);
  EXPECT_FALSE(coreSharingOf({"", "", "", ""}, c).shared());
  EXPECT_DOUBLE_EQ(coreSharingOf({"", "", "", ""}, c).computeFactor(), 1.0);
  c.cores = 0;  // a hardware profile
  EXPECT_FALSE(coreSharingOf({"", "", "", "", "", ""}, c).shared());
  c.cores = 2;  // 3 ranks on the busiest of two hosts
  const CoreSharing s = coreSharingOf({"a", "a", "a", "b"}, c);
  EXPECT_EQ(s.ranks, 3);
  EXPECT_DOUBLE_EQ(s.computeFactor(), 1.5);
  EXPECT_FALSE(s.straggler.has_value());
}

// dp4 m2 on 2 cores: compute 2 x (2 micro-batches x 2 layers x 3 ms), the
// step's end (the gradient all-reduce, one bucket, and the loss
// all-reduce) 1 ms each from the shared_cores fit; on 4 cores the free
// same_host fit and compute at full speed.
TEST(PredictSharedCores, TheStepsEndCollectivesOfRanksSharingCoresTakeTheSharedCoresFit) {
  Layout l;
  l.dp = 4;
  l.microBatches = 2;
  auto enough = predictLayout(l, sharedCalibration(4));
  ASSERT_TRUE(enough.isOk()) << enough.status().message();
  EXPECT_NEAR(enough->stepNs, 12 * kMs, 1.0);
  EXPECT_TRUE(enough->warnings.empty());
  auto shared = predictLayout(l, sharedCalibration(2));
  ASSERT_TRUE(shared.isOk()) << shared.status().message();
  EXPECT_NEAR(shared->stepNs, 2 * 12 * kMs + 1 * kMs + 1 * kMs, 1.0);
  EXPECT_NEAR(shared->exposedCommNs.at("dp"), 1 * kMs, 1.0);
  ASSERT_EQ(shared->warnings.size(), 1u);
  EXPECT_EQ(shared->warnings[0].rfind("4 ranks on a host of 2 cores", 0), 0u);
  // The straggler factor measured among ranks sharing cores replaces the
  // calibration's.
  Calibration c = sharedCalibration(2);
  c.ops.push_back({"step", "straggler", 0, 1, 1.5, 1.5, 2});
  c.ops.push_back({kSharedCoresPart, "straggler", 0, 1, 1.25, 1.25, 2});
  auto straggling = predictLayout(l, c);
  ASSERT_TRUE(straggling.isOk());
  EXPECT_NEAR(straggling->stepNs, 1.25 * 2 * 12 * kMs + 2 * kMs, 1.0);
  auto alone = predictLayout(l, [&] {
    Calibration four = c;
    four.cores = 4;
    return four;
  }());
  ASSERT_TRUE(alone.isOk());
  EXPECT_NEAR(alone->stepNs, 1.5 * 12 * kMs, 1.0);
}

// A blocked receive's wake-up: between ranks that time-share the cores the
// shared-cores fit, with a core each the link's own; none measured: 0, said.
TEST(PredictSharedCores, ABlockedReceiveWakesUpAtItsSharingsPace) {
  Layout l;
  l.dp = 2;
  l.pp = 2;
  l.microBatches = 4;
  l.schedule = ScheduleKind::kOneFOneB;
  Calibration c = sharedCalibration(2);
  c.links.push_back({"pp", kSameHost, "p2p", 2, 0, 0.0, 1, 8, 8});
  auto none = predictLayout(l, c);
  ASSERT_TRUE(none.isOk()) << none.status().message();
  EXPECT_EQ(none->recvWakeNs, 0.0);
  EXPECT_NE(std::find(none->warnings.begin(), none->warnings.end(),
                      "no wake-up of a blocked pipeline receive measured: taken as 0"),
            none->warnings.end());
  c.links.push_back({"pp", kSameHost, kReceiveWake, 2, 0.2 * kMs, 0.0, 1, 8, 8});
  c.links.push_back({"pp", kSharedCores, kReceiveWake, 2, 1.4 * kMs, 0.0, 1, 8, 8});
  auto shared = predictLayout(l, c);
  ASSERT_TRUE(shared.isOk()) << shared.status().message();
  EXPECT_DOUBLE_EQ(shared->recvWakeNs, 1.4 * kMs);
  EXPECT_GT(shared->stepNs, none->stepNs);
  c.cores = 4;
  auto own = predictLayout(l, c);
  ASSERT_TRUE(own.isOk()) << own.status().message();
  EXPECT_DOUBLE_EQ(own->recvWakeNs, 0.2 * kMs);
}

// dp2 x pp2 1F1B m8 (a layer a stage: F 1 ms, B 2 ms) with free
// collectives: on 4 cores a stage's 24 ms of work and the bubble's 3 ms. On
// 2 cores a stage's two ranks alone run at a core each and two stages at
// half a core each, so the host does 1 ms of a stage's work a millisecond
// whichever stages run, and one always does: the step is both stages' work,
// 48 ms (time_sharing.h); every op stretched by 4/2 would take 54 ms. The
// ops' durations add up to T alone plus 2 x (48 - T) side by side, and at
// least stage 0's first forward and last backward (T >= 3) run alone: at
// most 93/48 = 1.9375x the work on average.
TEST(PredictSharedCores, APipelinesBubblesLeaveTheirCoresToTheOtherStage) {
  Layout l;
  l.dp = 2;
  l.pp = 2;
  l.microBatches = 8;
  l.schedule = ScheduleKind::kOneFOneB;
  Calibration c = sharedCalibration(4);
  for (LinkFit& f : c.links) f.alphaNs = f.betaNsPerByte = 0;
  c.links.push_back({"pp", kSameHost, "p2p", 2, 0, 0.0, 1, 8, 8});
  c.links.push_back({"pp", kSameHost, kReceiveWake, 2, 0, 0.0, 1, 8, 8});
  auto enough = predictLayout(l, c);
  ASSERT_TRUE(enough.isOk()) << enough.status().message();
  EXPECT_NEAR(enough->stepNs, 27 * kMs, 1.0);
  c.cores = 2;
  auto shared = predictLayout(l, c);
  ASSERT_TRUE(shared.isOk()) << shared.status().message();
  EXPECT_NEAR(shared->stepNs, 48 * kMs, 48 * kMs * 1e-4);  // the fixed point's tolerance
  ASSERT_EQ(shared->warnings.size(), 1u);
  const std::string& w = shared->warnings[0];
  const std::string head =
      "4 ranks on a host of 2 cores: they share the cores (oversubscribed), so compute is "
      "predicted ";
  ASSERT_EQ(w.rfind(head, 0), 0u) << w;
  EXPECT_NE(w.find("x slower on average (2.00x while every stage computes; a stage waiting in "
                   "the pipeline's bubbles leaves its cores to the others)"),
            std::string::npos)
      << w;
  const double average = std::stod(w.substr(head.size()));
  EXPECT_GE(average, 1.0);
  EXPECT_LE(average, 1.94);
  // The same ranks on two hosts of 2 cores each: no sharing at all.
  l.hosts = {"a:2", "b:2"};
  auto spread = predictLayout(l, c);
  ASSERT_TRUE(spread.isOk()) << spread.status().message();
  EXPECT_NEAR(spread->stepNs, 27 * kMs, 1.0);
}

// pp4 GPipe m4 of a 4-layer model (a layer a stage: F 1 ms, B 2 ms), free
// transfers, on 2 cores: one rank a stage, so the stages are placed as the
// scheduler does (core_placement.h): stage 0 keeps its core through the
// fill and its four forwards take 1 ms each, and the warning says so. With
// 2 ranks a stage (dp2 x pp2) the cores are shared evenly, as before.
TEST(PredictSharedCores, FourStagesOfOneRankOnTwoCoresArePlacedAsTheSchedulerDoes) {
  Layout l;
  l.model.numLayers = 4;
  l.pp = 4;
  l.microBatches = 4;
  l.schedule = ScheduleKind::kGPipe;
  Calibration c = sharedCalibration(2);
  c.model.numLayers = 4;
  for (LinkFit& f : c.links) f.alphaNs = f.betaNsPerByte = 0;
  c.links.push_back({"pp", kSameHost, "p2p", 2, 0, 0.0, 1, 8, 8});
  c.links.push_back({"pp", kSameHost, kReceiveWake, 2, 0, 0.0, 1, 8, 8});
  auto placed = predictLayout(l, c);
  ASSERT_TRUE(placed.isOk()) << placed.status().message();
  int32_t forwards = 0;
  for (size_t i = 0; i < placed->schedule.stageOps[0].size(); ++i) {
    if (placed->schedule.stageOps[0][i].type != OpType::kForward) continue;
    EXPECT_NEAR(placed->opCostsNs[0][i], 1 * kMs, 1 * kMs * 1e-4) << i;
    ++forwards;
  }
  EXPECT_EQ(forwards, 4);
  ASSERT_EQ(placed->warnings.size(), 1u) << placed->warnings.front();
  EXPECT_NE(placed->warnings[0].find("x slower on average (placed as the scheduler does: a "
                                     "running rank keeps its core, a woken one joins the core "
                                     "of the rank that woke it; up to 3x for ranks sharing a "
                                     "core)"),
            std::string::npos)
      << placed->warnings[0];
  l.pp = 2;
  l.dp = 2;
  auto even = predictLayout(l, c);
  ASSERT_TRUE(even.isOk()) << even.status().message();
  ASSERT_EQ(even->warnings.size(), 1u);
  EXPECT_NE(even->warnings[0].find("while every stage computes"), std::string::npos)
      << even->warnings[0];
}

// tp2 x dp2 on 2 cores: the tp all-reduces between compute ops keep their
// same_host fit (0.1 ms a call, 2 per layer and pass: 16 calls) — a rank
// waiting for its tp peer leaves the core to a rank that computes, which
// the sharing already costs — while the step's dp all-reduces take the
// shared_cores fit, scaled from its group of 4 to 2 by the ring's steps
// (2 of 6: 1/3 ms).
TEST(PredictSharedCores, CollectivesBetweenComputeOpsKeepTheirOwnFit) {
  const Layout l = tp2dp2();
  auto p = predictLayout(l, sharedCalibration(2));
  ASSERT_TRUE(p.isOk()) << p.status().message();
  EXPECT_NEAR(p->exposedCommNs.at("tp"), 16 * 0.1 * kMs, 1.0);
  EXPECT_NEAR(p->exposedCommNs.at("dp"), 1 * kMs / 3, 1.0);
}

// With tp's own all-reduces measured between time-shared ranks (the
// shared-cores tp 2 x dp C run: a tp fit of link shared_cores, 0.5 ms a
// call), those stand for themselves between compute ops: 16 calls.
TEST(PredictSharedCores, TpsOwnSharedCoresFitStandsForItsPerLayerAllReduces) {
  Calibration c = sharedCalibration(2);
  c.links.push_back({"tp", kSharedCores, "allreduce", 2, 0.5 * kMs, 0.0, 1, 8, 8});
  const Layout l = tp2dp2();
  auto p = predictLayout(l, c);
  ASSERT_TRUE(p.isOk()) << p.status().message();
  EXPECT_NEAR(p->exposedCommNs.at("tp"), 16 * 0.5 * kMs, 1.0);
  // Not between ranks with a core each.
  auto alone = predictLayout(l, [&] {
    Calibration four = c;
    four.cores = 4;
    return four;
  }());
  ASSERT_TRUE(alone.isOk());
  EXPECT_NEAR(alone->exposedCommNs.at("tp"), 16 * 0.1 * kMs, 1.0);
}

// A tp group's measured share of the stretch (CoreSharing::paid): its
// compute is stretched by 1 + (s - 1) · share, so the step moves linearly
// from paying none to paying all (s = 2 here: 4 ranks on 2 cores), and the
// warning says the share. Without the shared-cores tp fit the share is not
// used (the waits it stands for are not priced).
TEST(PredictSharedCores, ATpGroupPaysItsMeasuredShareOfTheStretch) {
  Calibration c = sharedCalibration(2);
  c.links.push_back({"tp", kSharedCores, "allreduce", 2, 0.5 * kMs, 0.0, 1, 8, 8});
  const Layout l = tp2dp2();
  auto all = predictLayout(l, c);
  auto none = predictLayout(l, withTpStretchPaid(c, 0.0));
  auto quarter = predictLayout(l, withTpStretchPaid(c, 0.25));
  auto full = predictLayout(l, withTpStretchPaid(c, 1.0));
  ASSERT_TRUE(all.isOk() && none.isOk() && quarter.isOk() && full.isOk());
  EXPECT_DOUBLE_EQ(full->stepNs, all->stepNs);
  ASSERT_GT(all->stepNs, none->stepNs);
  EXPECT_NEAR(quarter->stepNs, none->stepNs + 0.25 * (all->stepNs - none->stepNs), 1.0);
  EXPECT_NEAR(quarter->exposedCommNs.at("tp"), 16 * 0.5 * kMs, 1.0);
  const bool said = std::any_of(quarter->warnings.begin(), quarter->warnings.end(), [](auto& w) {
    return w.find("compute is predicted 1.25x slower (time-sharing: 2.00x, of which a tp "
                  "group's ranks pay 25%") != std::string::npos;
  });
  EXPECT_TRUE(said) << quarter->warnings.back();
  // No shared-cores tp fit: the share changes nothing.
  const Calibration plain = sharedCalibration(2);
  auto plainAll = predictLayout(l, plain);
  auto plainNone = predictLayout(l, withTpStretchPaid(plain, 0.0));
  ASSERT_TRUE(plainAll.isOk() && plainNone.isOk());
  EXPECT_DOUBLE_EQ(plainNone->stepNs, plainAll->stepNs);
  // Nor for layouts without tp.
  Layout dp = l;
  dp.tp = 1;
  dp.dp = 4;
  auto dpAll = predictLayout(dp, c);
  auto dpNone = predictLayout(dp, withTpStretchPaid(c, 0.0));
  ASSERT_TRUE(dpAll.isOk() && dpNone.isOk());
  EXPECT_DOUBLE_EQ(dpNone->stepNs, dpAll->stepNs);
}

// A calibration from a run of more ranks than cores (calibrate --run on
// it) measured its same_host fits between time-shared ranks: they are used
// as they are, with no shared_cores fit asked for.
TEST(PredictSharedCores, AnOversubscribedCalibrationsOwnFitsStandForThemselves) {
  Calibration c = sharedCalibration(2);
  c.ranksPerHost = 4;  // oversubscribed: thread CPU times (equal to wall here)
  c.links = {{"dp", kSameHost, "allreduce", 4, 2 * kMs, 0.0, 1, 8, 8}};
  Layout l;
  l.dp = 4;
  l.microBatches = 2;
  auto p = predictLayout(l, c);
  ASSERT_TRUE(p.isOk()) << p.status().message();
  EXPECT_NEAR(p->stepNs, 2 * 12 * kMs + 2 * kMs + 2 * kMs, 1.0);
  ASSERT_EQ(p->warnings.size(), 1u) << p->warnings.back();
  EXPECT_EQ(p->warnings[0].rfind("4 ranks on a host of 2 cores", 0), 0u);
}

}  // namespace
}  // namespace bubblescope::layout
