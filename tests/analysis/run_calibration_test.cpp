// calibrationOf(): each collective's alpha-beta fit per link class, a
// sample's link its rank's group's of that dimension (same_host / other_host,
// planning/link_class.h), and the ep all-to-alls fitted on dim ep.
#include "storage/analysis/run_calibration.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "planning/contention.h"
#include "planning/formulas.h"
#include "planning/link_class.h"

namespace bubblescope::analysis {
namespace {

storage::RankInfo rankOn(int32_t rank, const std::string& host, const layout::Layout& l) {
  storage::RankInfo r;
  r.rank = rank;
  r.host = host;
  r.coresOnHost = 8;
  r.ranksOnHost = 2;
  r.dp = rank / (l.pp * l.tp);
  r.pp = (rank / l.tp) % l.pp;
  return r;
}

// Samples of `dim`'s `collective` on every rank at 1 KiB and 1 MiB, steps 1
// and 2: time = alpha + beta · bytes.
void addComms(MeasuredOps& m, const std::string& dim, const std::string& collective, double alphaNs,
              double betaNsPerByte) {
  for (const storage::RankInfo& r : m.ranks) {
    for (int32_t step = 1; step < 3; ++step) {
      for (int64_t bytes : {int64_t{1} << 10, int64_t{1} << 20}) {
        m.comms.push_back({r.rank, step, 0, dim, collective, bytes,
                           alphaNs + betaNsPerByte * static_cast<double>(bytes)});
      }
    }
  }
}

MeasuredOps measuredOn(const layout::Layout& l, const std::vector<std::string>& hosts) {
  MeasuredOps m;
  m.layout = l;
  m.steps = 3;
  for (int32_t r = 0; r < static_cast<int32_t>(hosts.size()); ++r) {
    m.ranks.push_back(rankOn(r, hosts[r], l));
    m.layers.push_back({r, 1, "block", "forward", {1e6, 1e6}});
  }
  return m;
}

const layout::LinkFit* exactFit(const layout::Calibration& c, const std::string& dim,
                                const std::string& collective, const std::string& link) {
  for (const layout::LinkFit& f : c.links) {
    if (f.dim == dim && f.collective == collective && f.link == link) return &f;
  }
  return nullptr;
}

TEST(RunCalibrationLinks, EachGroupIsFittedOnTheLinkItCrosses) {
  layout::Layout l;
  l.dp = 2;
  l.pp = 2;
  // Ranks by node, as mpirun maps them with one rank per host in turn: the
  // dp pairs (0, 2) and (1, 3) stay on a host, the pipeline pairs cross.
  MeasuredOps m = measuredOn(l, {"hostA", "hostB", "hostA", "hostB"});
  addComms(m, "dp", "allreduce", 10000, 0.1);
  addComms(m, "pp", "p2p", 50000, 1.0);
  auto c = calibrationOf(m, 7);
  ASSERT_TRUE(c.isOk()) << c.status().message();
  ASSERT_EQ(c->links.size(), 2u);
  const layout::LinkFit* dp = exactFit(*c, "dp", "allreduce", "same_host");
  const layout::LinkFit* pp = exactFit(*c, "pp", "p2p", "other_host");
  ASSERT_NE(dp, nullptr);
  ASSERT_NE(pp, nullptr);
  EXPECT_NEAR(dp->alphaNs, 10000, 1e-3);
  EXPECT_NEAR(dp->betaNsPerByte, 0.1, 1e-9);
  EXPECT_NEAR(pp->alphaNs, 50000, 1e-3);
  EXPECT_NEAR(pp->betaNsPerByte, 1.0, 1e-9);
  EXPECT_EQ(dp->groupSize, 2);

  // The same run with the stages on one host each: now the dp pairs cross.
  MeasuredOps byStage = measuredOn(l, {"hostA", "hostA", "hostB", "hostB"});
  addComms(byStage, "dp", "allreduce", 90000, 2.0);
  auto d = calibrationOf(byStage, 8);
  ASSERT_TRUE(d.isOk()) << d.status().message();
  ASSERT_NE(exactFit(*d, "dp", "allreduce", "other_host"), nullptr);
  EXPECT_EQ(exactFit(*d, "dp", "allreduce", "same_host"), nullptr);
  // One calibration holds both links apart; a lookup finds each.
  layout::Calibration both = layout::mergeCalibrations({*c, *d});
  EXPECT_NEAR(both.linkFit("dp", "allreduce", "same_host")->alphaNs, 10000, 1e-3);
  EXPECT_NEAR(both.linkFit("dp", "allreduce", "other_host")->alphaNs, 90000, 1e-3);
}

// tp's all-reduces inside the layers (tagged with a micro-batch) are
// priced at their mean wall time (each one's wait and tail is paid by the
// step), the step's 8-byte gradient-norm all-reduce (no micro-batch) at the
// lower quartile as every other collective: samples 1, 1, 1, 5 ms at 128 KiB
// give 2 ms, samples 10, 10, 10, 50 us at 8 bytes give 10 us.
TEST(RunCalibrationLinks, PredictTpAllReducesInsideTheLayersArePricedAtTheirMean) {
  layout::Layout l;
  l.tp = 2;
  MeasuredOps m = measuredOn(l, {"hostA", "hostA"});
  for (int32_t rank = 0; rank < 2; ++rank) {
    for (double ms : {1.0, 1.0, 1.0, 5.0}) {
      m.comms.push_back({rank, 1, 0, "tp", "allreduce", 131072, ms * 1e6});
    }
    for (double us : {10.0, 10.0, 10.0, 50.0}) {
      m.comms.push_back({rank, 1, -1, "tp", "allreduce", 8, us * 1e3});
    }
  }
  auto c = calibrationOf(m, 9);
  ASSERT_TRUE(c.isOk()) << c.status().message();
  const layout::LinkFit* tp = exactFit(*c, "tp", "allreduce", "same_host");
  ASSERT_NE(tp, nullptr);
  EXPECT_NEAR(tp->timeNs(131072), 2e6, 1e-3);
  EXPECT_NEAR(tp->timeNs(8), 1e4, 1e-3);
}

// A blocked pipeline receive's wake-up: the mean of the hops less the p2p
// transfer of their bytes, per link; a step before the first counted one is
// left out. Transfers 40 us at 128 KiB; hops 140, 140, 240 and 1040 us in
// steps 1 and 2 (mean 390 us, wake 350 us); step 0's 9 ms hop not counted.
TEST(RunCalibrationLinks, PredictABlockedReceivesWakeUpIsItsMeanHopLessTheTransfer) {
  layout::Layout l;
  l.pp = 2;
  MeasuredOps m = measuredOn(l, {"hostA", "hostA"});
  for (int32_t rank = 0; rank < 2; ++rank) {
    m.comms.push_back({rank, 1, 0, "pp", "p2p", 131072, 40e3});
  }
  m.hops = {{1, 0, 131072, 9e6},
            {1, 1, 131072, 140e3},
            {0, 1, 131072, 140e3},
            {1, 2, 131072, 240e3},
            {0, 2, 131072, 1040e3}};
  auto c = calibrationOf(m, 10);
  ASSERT_TRUE(c.isOk()) << c.status().message();
  const layout::LinkFit* wake = exactFit(*c, "pp", layout::kReceiveWake, "same_host");
  ASSERT_NE(wake, nullptr);
  EXPECT_NEAR(wake->alphaNs, 350e3, 1e-6);
  EXPECT_EQ(wake->betaNsPerByte, 0.0);
  EXPECT_EQ(wake->samples, 4);
  EXPECT_EQ(wake->groupSize, 2);
  // Hops shorter than the transfer: no negative wake-up.
  m.hops = {{1, 1, 131072, 10e3}, {0, 1, 131072, 20e3}};
  auto fast = calibrationOf(m, 11);
  ASSERT_TRUE(fast.isOk()) << fast.status().message();
  ASSERT_NE(exactFit(*fast, "pp", layout::kReceiveWake, "same_host"), nullptr);
  EXPECT_EQ(exactFit(*fast, "pp", layout::kReceiveWake, "same_host")->alphaNs, 0.0);
}

TEST(RunCalibrationLinks, ExpertAllToAllsAreFittedOnTheEpGroup) {
  layout::Layout l;
  l.model.experts = 4;
  l.model.topK = 2;
  l.dp = 4;
  l.ep = 2;  // ep groups (0, 1) and (2, 3)
  MeasuredOps m = measuredOn(l, {"hostA", "hostA", "hostB", "hostB"});
  addComms(m, "ep", "all_to_all", 30000, 0.25);
  addComms(m, "dp", "allreduce", 60000, 0.5);
  auto c = calibrationOf(m, 9);
  ASSERT_TRUE(c.isOk()) << c.status().message();
  const layout::LinkFit* ep = exactFit(*c, "ep", "all_to_all", "same_host");
  ASSERT_NE(ep, nullptr);
  EXPECT_EQ(ep->groupSize, 2);
  EXPECT_NEAR(ep->alphaNs, 30000, 1e-3);
  EXPECT_NEAR(ep->betaNsPerByte, 0.25, 1e-9);
  ASSERT_NE(exactFit(*c, "dp", "allreduce", "other_host"), nullptr);  // dp 4 spans both
}

// The op spans' wall over CPU time (planning/contention.h's measured
// stretch), steps after the first: rank 0's forward 3 ms wall on 1 ms of
// CPU, rank 1's 5 on 1; the first step's 100 ms is left out.
TEST(RunCalibrationStretch, PredictTheOpSpansStretchIsTheirWallOverCpuTime) {
  layout::Layout l;
  l.dp = 2;
  MeasuredOps m = measuredOn(l, {"a", "a"});
  m.cpuMeasured = true;
  m.ops[{0, 0, 0, 0, "forward"}] = {100e6, 1e6};
  m.ops[{0, 1, 0, 0, "forward"}] = {3e6, 1e6};
  m.ops[{1, 1, 0, 0, "forward"}] = {5e6, 1e6};
  auto c = calibrationOf(m, 1);
  ASSERT_TRUE(c.isOk()) << c.status().message();
  EXPECT_DOUBLE_EQ(layout::measuredStretch(*c), 4.0);
  // Without thread CPU times nothing is said.
  m.cpuMeasured = false;
  auto none = calibrationOf(m, 1);
  ASSERT_TRUE(none.isOk());
  EXPECT_TRUE(std::none_of(none->ops.begin(), none->ops.end(), [](const auto& e) {
    return e.part == layout::kContentionPart;
  }));
}

// ZeRO 2's bucket work: its wall time is the window's gap (40 ms a
// micro-batch); its CPU time the op span's CPU less its layers' (30 - 24 =
// 6 ms) plus the gap outside the op span (40 - 30 = 10 ms of wall) over the
// run's op stretch (100 / 30): 9 ms. Under load the gaps are where a rank
// waits for its core; without CPU times both columns are the wall time.
TEST(RunCalibrationZeroBucket, PredictTheBucketWorksCpuTimeLeavesOutTheTimeOffItsCore) {
  layout::Layout l;
  l.dp = 2;
  l.zeroStage = layout::ZeroStage::kGradients;
  MeasuredOps m = measuredOn(l, {"a", "a"});
  m.cpuMeasured = true;
  for (int32_t rank = 0; rank < 2; ++rank) {
    for (int32_t step = 1; step < 3; ++step) {
      const OpKey key{rank, step, 0, 0, "backward"};
      m.microBatchGapNs[{rank, step, 0}] = 40e6;
      m.opSpans[key] = m.ops[key] = {100e6, 30e6};
      m.layerTotals[key] = {70e6, 24e6};
    }
  }
  const double elements = layout::parametersPerRank(l);
  auto bucketOf = [&](const layout::Calibration& c) {
    for (const layout::OpCostEntry& e : c.ops) {
      if (e.part == layout::kZeroBucketPart && e.op == layout::kZeroBucketOp) return e;
    }
    ADD_FAILURE() << "no bucket cost";
    return layout::OpCostEntry{};
  };
  auto c = calibrationOf(m, 1);
  ASSERT_TRUE(c.isOk()) << c.status().message();
  EXPECT_NEAR(bucketOf(*c).wallNs * elements, 40e6, 1.0);
  EXPECT_NEAR(bucketOf(*c).cpuNs * elements, 9e6, 1.0);
  m.cpuMeasured = false;
  auto wallOnly = calibrationOf(m, 1);
  ASSERT_TRUE(wallOnly.isOk());
  EXPECT_NEAR(bucketOf(*wallOnly).cpuNs * elements, 40e6, 1.0);
}

// ZeRO-3's per-layer parameter gathers (a micro-batch tag) are fitted apart
// at their mean (1, 1, 1 and 5 ms: 2 ms), the once-a-step ones at the lower
// quartile as before.
TEST(RunCalibrationLinks, PredictZeroThreesPerLayerGathersArePricedAtTheirMean) {
  layout::Layout l;
  l.dp = 2;
  l.zeroStage = layout::ZeroStage::kParameters;
  MeasuredOps m = measuredOn(l, {"a", "a"});
  for (int32_t rank = 0; rank < 2; ++rank) {
    for (double ms : {1.0, 1.0, 1.0, 5.0}) {
      m.comms.push_back({rank, 1, 0, "zero", "all_gather", 1 << 20, ms * 1e6});
      m.comms.push_back({rank, 1, -1, "zero", "all_gather", 1 << 20, ms * 1e6});
    }
  }
  auto c = calibrationOf(m, 1);
  ASSERT_TRUE(c.isOk()) << c.status().message();
  const layout::LinkFit* layer = exactFit(*c, "zero", layout::kMicroBatchAllGather, "same_host");
  ASSERT_NE(layer, nullptr);
  EXPECT_NEAR(layer->timeNs(1 << 20), 2e6, 1.0);
  const layout::LinkFit* step = exactFit(*c, "zero", "all_gather", "same_host");
  ASSERT_NE(step, nullptr);
  EXPECT_NEAR(step->timeNs(1 << 20), 1e6, 1.0);
  // ZeRO 1's gathers are once a step whatever their tag.
  l.zeroStage = layout::ZeroStage::kOptimizer;
  m.layout = l;
  auto one = calibrationOf(m, 1);
  ASSERT_TRUE(one.isOk());
  EXPECT_EQ(exactFit(*one, "zero", layout::kMicroBatchAllGather, "same_host"), nullptr);
}

}  // namespace
}  // namespace bubblescope::analysis

namespace bubblescope::analysis {
namespace {

TEST(RunCalibrationSteps, AHiccupStepIsLeftOutOfTheCosts) {
  layout::Layout l;
  l.dp = 2;
  MeasuredOps m = measuredOn(l, {"h", "h"});
  m.layers.clear();
  m.steps = 6;
  // Steps 1-5 of ~140 ms with a block forward of 1 ms; step 4 a hiccup of
  // 240 ms whose forward took 50 ms.
  for (int32_t r = 0; r < 2; ++r) {
    for (int32_t step = 1; step < 6; ++step) {
      const bool hiccup = step == 4;
      m.rankSteps[{r, step}].stepNs = (hiccup ? 240 : 140 + step) * 1e6;
      const double ns = hiccup ? 50e6 : 1e6;
      m.layers.push_back({r, step, "block", "forward", {ns, ns}});
    }
  }
  auto c = calibrationOf(m, 1);
  ASSERT_TRUE(c.isOk()) << c.status().message();
  const auto forward = c->opCostNs("block", "forward", 1, 1, false);
  ASSERT_TRUE(forward.has_value());
  EXPECT_DOUBLE_EQ(*forward, 1e6);  // averaged in, it would be 10.8 ms
}

}  // namespace
}  // namespace bubblescope::analysis
