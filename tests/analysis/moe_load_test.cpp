// MoE load balance from "moe.*" samples: names, imbalance, drop rate, the
// report's table and JSON, on hand-built traces whose answers are known.
#include "storage/analysis/moe_load.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/layout/moe_samples.h"

namespace bubblescope::analysis {
namespace {

using layout::MoeSampleKey;
using layout::MoeSeries;

TEST(MoeLoadTest, SampleNamesRoundTripAndRejectOthers) {
  for (const MoeSampleKey key :
       {MoeSampleKey{3, MoeSeries::kRouted, 7}, MoeSampleKey{0, MoeSeries::kDropped, 0},
        MoeSampleKey{12, MoeSeries::kAuxLoss, -1}}) {
    const std::string name = layout::moeSampleName(key);
    EXPECT_EQ(layout::parseMoeSampleName(name), key) << name;
  }
  EXPECT_EQ(layout::moeSampleName({1, MoeSeries::kRouted, 2}), "moe.h1.routed.e2");
  for (const char* other : {"mem.parameters", "moe.h.routed.e1", "moe.h1.routed.e",
                            "moe.h1.kept.e1", "moe.h1.routed.e1x", "moe.h-1.aux_loss"}) {
    EXPECT_FALSE(layout::parseMoeSampleName(other).has_value()) << other;
  }
}

std::vector<trace_model::Sample> stepSamples(int32_t block, int64_t timeNs,
                                             const std::vector<int64_t>& routed,
                                             const std::vector<int64_t>& dropped, double aux) {
  std::vector<trace_model::Sample> out;
  for (size_t e = 0; e < routed.size(); ++e) {
    const auto expert = static_cast<int32_t>(e);
    out.push_back({0, layout::moeSampleName({block, MoeSeries::kRouted, expert}), timeNs,
                   static_cast<double>(routed[e])});
    out.push_back({0, layout::moeSampleName({block, MoeSeries::kDropped, expert}), timeNs,
                   static_cast<double>(dropped[e])});
  }
  out.push_back({0, layout::moeSampleName({block, MoeSeries::kAuxLoss}), timeNs, aux});
  return out;
}

// Block 1, two experts, two steps: (6, 2) with 1 dropped: max/mean 6/4 =
// 1.5; then (4, 4): 1.0. Mean 1.25, worst step 0, 1 of 16 dropped.
std::vector<trace_model::Sample> twoSteps() {
  auto samples = stepSamples(1, 100, {6, 2}, {1, 0}, 1.2);
  for (auto& s : stepSamples(1, 200, {4, 4}, {0, 0}, 1.0)) samples.push_back(s);
  samples.push_back({0, "mem.parameters", 150, 4096.0});  // not MoE: ignored
  return samples;
}

TEST(MoeLoadTest, ImbalanceAndDropRatePerBlock) {
  const auto loads = moeLoadFromSamples(twoSteps());
  ASSERT_EQ(loads.size(), 1u);
  const MoeBlockLoad& l = loads[0];
  EXPECT_EQ(l.block, 1);
  EXPECT_EQ(l.experts, 2);
  EXPECT_EQ(l.steps, 2);
  EXPECT_DOUBLE_EQ(l.imbalanceMean, 1.25);
  EXPECT_DOUBLE_EQ(l.imbalanceMax, 1.5);
  EXPECT_EQ(l.imbalanceMaxStep, 0);
  EXPECT_EQ(l.routed, 16);
  EXPECT_EQ(l.dropped, 1);
  EXPECT_DOUBLE_EQ(*l.dropRate(), 1.0 / 16);
  EXPECT_DOUBLE_EQ(*l.auxLossMean, 1.1);
}

TEST(MoeLoadTest, PerStepLoadKeepsEachStepsExperts) {
  const auto loads = moeLoadFromSamples(twoSteps());
  ASSERT_EQ(loads.size(), 1u);
  ASSERT_EQ(loads[0].perStep.size(), 2u);
  const MoeStepLoad& first = loads[0].perStep[0];
  EXPECT_EQ(first.step, 0);
  EXPECT_EQ(first.timeNs, 100);
  EXPECT_EQ(first.routedByExpert, (std::vector<int64_t>{6, 2}));
  EXPECT_EQ(first.droppedByExpert, (std::vector<int64_t>{1, 0}));
  EXPECT_DOUBLE_EQ(*first.imbalance, 1.5);
  EXPECT_DOUBLE_EQ(*first.dropRate(), 1.0 / 8);
  EXPECT_DOUBLE_EQ(*first.auxLoss, 1.2);
  const MoeStepLoad& second = loads[0].perStep[1];
  EXPECT_EQ(second.step, 1);
  EXPECT_DOUBLE_EQ(*second.imbalance, 1.0);
  EXPECT_DOUBLE_EQ(*second.dropRate(), 0.0);
}

TEST(MoeLoadTest, ReportTableAndJson) {
  const auto loads = moeLoadFromSamples(twoSteps());
  const std::string text = moeLoadText(loads, false);
  EXPECT_NE(text.find("Mixture of experts"), std::string::npos) << text;
  EXPECT_NE(text.find("h.1"), std::string::npos) << text;
  EXPECT_NE(text.find("1.25"), std::string::npos) << text;
  EXPECT_NE(text.find("1.50 (0)"), std::string::npos) << text;
  EXPECT_NE(text.find("1/16"), std::string::npos) << text;
  EXPECT_NE(text.find("6.2%"), std::string::npos) << text;  // 1/16 = 6.25%, printf rounds to even
  // The per-step table: step 0 at 1.50 with 1 of 8 dropped, step 1 balanced.
  EXPECT_NE(text.find("per step and block"), std::string::npos) << text;
  EXPECT_NE(text.find("1.50, 12.5%"), std::string::npos) << text;
  EXPECT_NE(text.find("1.00, 0.0%"), std::string::npos) << text;
  EXPECT_EQ(moeLoadText({}, false), "");
  const auto json = moeLoadJson(loads);
  ASSERT_EQ(json.size(), 1u);
  EXPECT_EQ(json[0]["block"], 1);
  EXPECT_DOUBLE_EQ(json[0]["imbalance_max"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(json[0]["drop_rate"].get<double>(), 1.0 / 16);
  EXPECT_DOUBLE_EQ(json[0]["aux_loss_mean"].get<double>(), 1.1);
  ASSERT_EQ(json[0]["per_step"].size(), 2u);
  EXPECT_DOUBLE_EQ(json[0]["per_step"][0]["imbalance"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(json[0]["per_step"][0]["drop_rate"].get<double>(), 0.125);
  EXPECT_EQ(json[0]["per_step"][1]["routed_by_expert"], nlohmann::ordered_json({4, 4}));
}

}  // namespace
}  // namespace bubblescope::analysis
