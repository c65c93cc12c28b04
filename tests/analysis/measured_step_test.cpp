// measuredStep on a simulated run whose op costs are known: the medians, the
// stage spans and the stage bubbles come back exactly, and the ideal cost
// model rebuilt from them replays the same step.
#include "storage/analysis/measured_step.h"

#include <gtest/gtest.h>

#include <cmath>

#include "engine/layout/schedule.h"
#include "storage/analysis/run_analyzer.h"
#include "storage/simulated_run.h"
#include "tests/storage/temp_dir.h"

namespace bubblescope::analysis {
namespace {

using trace_model::EventKind;

constexpr int64_t kUnitNs = 1'000'000;

layout::Layout pipelineLayout(layout::ScheduleKind schedule, int32_t v = 1) {
  layout::Layout l;
  l.model = *layout::modelPreset("small");
  l.model.numLayers = 8;  // a layer per chunk at pp 4, v 2
  l.pp = 4;
  l.dp = 2;
  l.microBatches = 8;
  l.virtualChunks = v;
  l.steps = 3;
  l.schedule = schedule;
  return l;
}

layout::CostModel knownCosts() {
  layout::CostModel c;
  c.forward = 2.0;
  c.backwardInput = 3.0;
  c.comm = 0.25;
  return c;
}

Result<MeasuredStep> measure(const testing::TempDir& dir, const layout::Layout& l,
                             const layout::CostModel& costs, RunReport* report = nullptr) {
  const std::string path = dir.file("sim.db");
  {
    auto writer = storage::TraceWriter::open(path);
    EXPECT_TRUE(writer.isOk()) << writer.status().message();
    storage::SimulatedRunOptions options;
    options.costs = costs;
    options.unitNs = kUnitNs;
    auto run = storage::writeSimulatedRun(**writer, l, options);
    EXPECT_TRUE(run.isOk()) << run.status().message();
  }
  auto reader = storage::TraceReader::open(path);
  EXPECT_TRUE(reader.isOk()) << reader.status().message();
  if (report != nullptr) *report = *analyzeRun(**reader, 1);
  return measuredStep(**reader, 1);
}

TEST(MeasuredStepTest, MediansStageSpansAndBubblesOfAKnownRun) {
  testing::TempDir dir;
  const layout::Layout l = pipelineLayout(layout::ScheduleKind::kOneFOneB);
  RunReport report;
  const Result<MeasuredStep> m = measure(dir, l, knownCosts(), &report);
  ASSERT_TRUE(m.isOk()) << m.status().message();
  ASSERT_EQ(report.stages.size(), 4u);
  const layout::Simulation sim = *layout::simulate(*layout::scheduleFor(l), knownCosts());
  EXPECT_EQ(m->step, 1);  // steps 1 and 2 are equally long; the first is left out
  EXPECT_EQ(m->durationNs, std::llround(sim.makespan * kUnitNs));
  EXPECT_EQ(m->chunks, 1);
  EXPECT_DOUBLE_EQ(m->costs.forwardNs, 2.0 * kUnitNs);
  EXPECT_DOUBLE_EQ(m->costs.backwardNs, 3.0 * kUnitNs);
  EXPECT_DOUBLE_EQ(m->costs.backwardInputNs, 0.0);
  EXPECT_DOUBLE_EQ(m->costs.transferNs, 0.25 * kUnitNs);
  ASSERT_EQ(m->stages.size(), 4u);
  for (const MeasuredStage& s : m->stages) {
    int forwards = 0, backwards = 0;
    for (const StageSpan& span : s.spans) {
      forwards += span.kind == EventKind::kForward;
      backwards += span.kind == EventKind::kBackward;
    }
    EXPECT_EQ(forwards, 8) << s.stage;
    EXPECT_EQ(backwards, 8) << s.stage;
    EXPECT_EQ(s.spans.front().kind, EventKind::kForward);
    EXPECT_EQ(s.spans.front().microBatch, 0);
    EXPECT_GE(s.spans.front().startNs, 0);
    EXPECT_LE(s.spans.back().endNs, m->durationNs);
    // Every step and dp rank of a simulation is alike: the report's stage
    // bubble (a mean over them) is this step's.
    EXPECT_NEAR(s.bubble, *report.stages[s.stage].bubbleFraction, 1e-9) << s.stage;
    EXPECT_GT(s.bubble, 0.2) << s.stage;
  }
  EXPECT_TRUE(m->oversubscribed.empty());
  // The ideal costs rebuilt from the medians replay the same step in ns.
  const layout::CostModel ideal = idealCostsOf(m->costs, m->chunks);
  EXPECT_DOUBLE_EQ(ideal.forward, 2.0 * kUnitNs);
  EXPECT_DOUBLE_EQ(ideal.backwardInput, 3.0 * kUnitNs);
  EXPECT_DOUBLE_EQ(ideal.backwardWeight, 0.0);
  EXPECT_DOUBLE_EQ(ideal.comm, 0.25 * kUnitNs);
  const auto again = layout::simulate(*layout::scheduleFor(l), ideal);
  ASSERT_TRUE(again.isOk());
  EXPECT_NEAR(again->makespan, sim.makespan * kUnitNs, 1e-3);
}

TEST(MeasuredStepTest, InterleavedAndSplitBackwardsScaleToTheStage) {
  testing::TempDir dir;
  const Result<MeasuredStep> m =
      measure(dir, pipelineLayout(layout::ScheduleKind::kInterleaved, 2), knownCosts());
  ASSERT_TRUE(m.isOk()) << m.status().message();
  EXPECT_EQ(m->chunks, 2);
  EXPECT_DOUBLE_EQ(m->costs.forwardNs, 1.0 * kUnitNs);  // a chunk does half the stage
  EXPECT_DOUBLE_EQ(idealCostsOf(m->costs, m->chunks).forward, 2.0 * kUnitNs);

  testing::TempDir dir2;
  layout::CostModel split = knownCosts();
  split.backwardWeight = 1.5;
  const Result<MeasuredStep> z =
      measure(dir2, pipelineLayout(layout::ScheduleKind::kZeroBubbleH1), split);
  ASSERT_TRUE(z.isOk()) << z.status().message();
  const layout::CostModel ideal = idealCostsOf(z->costs, z->chunks);
  EXPECT_DOUBLE_EQ(ideal.backwardInput, 3.0 * kUnitNs);
  EXPECT_DOUBLE_EQ(ideal.backwardWeight, 1.5 * kUnitNs);
}

TEST(MeasuredStepTest, NamesOversubscribedHosts) {
  trace_model::RankInfo a, b, c;
  a.host = "h0";
  a.coresOnHost = 2;
  a.ranksOnHost = 8;
  b = a;
  b.rank = 1;
  c.host = "h1";
  c.coresOnHost = 16;
  c.ranksOnHost = 8;
  EXPECT_EQ(oversubscribedHosts({a, b, c}),
            std::vector<std::string>{"host h0 ran 8 ranks on 2 cores"});
  EXPECT_TRUE(oversubscribedHosts({c}).empty());
}

TEST(MeasuredStepTest, ARunWithoutStepsIsAnError) {
  testing::TempDir dir;
  const std::string path = dir.file("empty.db");
  {
    auto writer = storage::TraceWriter::open(path);
    ASSERT_TRUE(writer.isOk());
    storage::RunInfo info;
    info.name = "empty";
    ASSERT_TRUE((*writer)->beginRun(info).isOk());
  }
  auto reader = storage::TraceReader::open(path);
  ASSERT_TRUE(reader.isOk());
  const auto m = measuredStep(**reader, 1);
  ASSERT_FALSE(m.isOk());
  EXPECT_EQ(m.status().message(), "run 1 (empty) has no step records");
  EXPECT_FALSE(measuredStep(**reader, 7).isOk());
}

}  // namespace
}  // namespace bubblescope::analysis
