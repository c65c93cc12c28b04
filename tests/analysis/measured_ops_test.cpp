// measureOps on a hand-built trace: the optimizer op is the executor's
// grad_norm and optimizer spans together, and the step's uncovered time is
// what no span covers.
#include "storage/analysis/measured_ops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "storage/trace_reader.h"
#include "tests/analysis/trace_builder.h"

namespace bubblescope::analysis {
namespace {

using testing::span;
using trace_model::EventKind;

trace_model::Event named(trace_model::Event e, const char* name) {
  e.name = name;
  return e;
}

TEST(MeasuredOps, TheOptimizerOpIsItsGradNormAndUpdateSpansTogether) {
  testing::TraceBuilder b;
  testing::TraceBuilder::RunSpec spec;
  spec.ranks = {testing::rankInfo(0, 0, 0, 0)};
  // Step 0: forward 0-100, backward 100-300, a gap of 20 (zeroing, say),
  // grad_norm 320-380, optimizer 380-400; the step record 0-450.
  spec.events = {named(span(0, EventKind::kForward, 0, 100, 0), "forward"),
                 named(span(0, EventKind::kBackward, 100, 300, 0), "backward"),
                 named(span(0, EventKind::kOptimizer, 320, 380, 0), "grad_norm"),
                 named(span(0, EventKind::kOptimizer, 380, 400, 0), "optimizer")};
  for (auto& e : spec.events) e.microBatch = e.kind == EventKind::kOptimizer ? -1 : 0;
  spec.steps = {testing::stepRecord(0, 0, 0, 450)};
  const int64_t run = b.run(spec);
  auto reader = storage::TraceReader::open(b.path());
  ASSERT_TRUE(reader.isOk()) << reader.status().message();
  auto m = measureOps(**reader, run);
  ASSERT_TRUE(m.isOk()) << m.status().message();
  const auto optimizer = m->op(0, 0, -1, -1, "optimizer");
  ASSERT_TRUE(optimizer.has_value());
  EXPECT_DOUBLE_EQ(optimizer->wallNs, 80.0);  // 60 of the norm + 20 of the update
  EXPECT_FALSE(m->op(0, 0, -1, -1, "grad_norm").has_value());
  const RankStepTime t = m->rankSteps.at({0, 0});
  EXPECT_DOUBLE_EQ(t.stepNs, 450.0);
  EXPECT_DOUBLE_EQ(t.uncoveredNs(), 70.0);  // 300-320 and 400-450
}

MeasuredOps stepsOf(const std::vector<std::vector<double>>& msPerRank) {
  MeasuredOps m;
  for (size_t r = 0; r < msPerRank.size(); ++r) {
    for (size_t s = 0; s < msPerRank[r].size(); ++s) {
      m.rankSteps[{static_cast<int32_t>(r), static_cast<int32_t>(s)}].stepNs =
          msPerRank[r][s] * 1e6;
      m.steps = std::max(m.steps, static_cast<int32_t>(s) + 1);
    }
  }
  return m;
}

TEST(MeasuredOps, AHiccupStepIsNotTypical) {
  // The VM's dp2 run: steps 1-7 of 135-152 ms and one of 238 ms (step 5).
  const MeasuredOps m =
      stepsOf({{154, 152, 143, 146, 136, 238, 138, 137}, {150, 150, 141, 144, 134, 200, 137, 136}});
  EXPECT_EQ(typicalSteps(m, 1), (std::set<int32_t>{1, 2, 3, 4, 6, 7}));
  // Its limit: median 143 ms, MAD 6 ms: 143 + 3 x 1.4826 x 6 = 169.7 ms;
  // a step at 169 ms is typical, at 171 not.
  EXPECT_EQ(typicalSteps(stepsOf({{0, 152, 143, 146, 136, 169, 138, 137}}), 1).count(5), 1u);
  EXPECT_EQ(typicalSteps(stepsOf({{0, 152, 143, 146, 136, 171, 138, 137}}), 1).count(5), 0u);
}

TEST(MeasuredOps, EqualStepsKeepAFivePercentFloorAndFewStepsAreAllKept) {
  // All equal but one 4% above: MAD 0, the 5% floor keeps it; 6% does not.
  EXPECT_EQ(typicalSteps(stepsOf({{100, 100, 104, 100, 100}}), 0).size(), 5u);
  EXPECT_EQ(typicalSteps(stepsOf({{100, 100, 106, 100, 100}}), 0).size(), 4u);
  // Two recorded steps cannot say which is the odd one: both kept.
  EXPECT_EQ(typicalSteps(stepsOf({{100, 300}}), 0).size(), 2u);
  // A NaN record counts as none: kept, and not part of the median.
  EXPECT_EQ(typicalSteps(stepsOf({{100, 100, std::nan(""), 100, 200}}), 0),
            (std::set<int32_t>{0, 1, 2, 3}));
}

TEST(MeasuredOps, OnlyStepsDropsEverySampleOfTheOthers) {
  MeasuredOps m = stepsOf({{10, 10, 50}});
  m.layers = {{0, 1, "block", "forward", {1, 1}}, {0, 2, "block", "forward", {9, 9}}};
  m.comms = {{0, 2, -1, "dp", "allreduce", 8, 5}};
  m.ops[{0, 2, -1, -1, "optimizer"}] = {3, 3};
  m.ops[{0, 1, -1, -1, "optimizer"}] = {1, 1};
  m.microBatchGapNs[{0, 2, 0}] = 4;
  const MeasuredOps kept = onlySteps(m, {0, 1});
  ASSERT_EQ(kept.layers.size(), 1u);
  EXPECT_EQ(kept.layers[0].step, 1);
  EXPECT_TRUE(kept.comms.empty());
  EXPECT_EQ(kept.ops.size(), 1u);
  EXPECT_TRUE(kept.microBatchGapNs.empty());
  EXPECT_EQ(kept.rankSteps.size(), 2u);
  EXPECT_EQ(kept.steps, 3);
}

}  // namespace
}  // namespace bubblescope::analysis
