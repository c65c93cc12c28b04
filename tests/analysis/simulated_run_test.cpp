// A simulated run written into a trace and read back by the analysis: the
// report's per-stage bubble is the schedule's, because both come from the
// same op lists (layout::scheduleFor) and the same bubble definition.
#include "storage/simulated_run.h"

#include <gtest/gtest.h>

#include "engine/layout/schedule.h"
#include "planning/simulator.h"
#include "storage/analysis/run_analyzer.h"
#include "tests/storage/temp_dir.h"

namespace bubblescope::analysis {
namespace {

using trace_model::EventKind;

// Free communication, no gradient collective and no optimizer cost: the
// assumptions of the papers' bubble formulas.
layout::CostModel formulaCosts() {
  layout::CostModel c;
  c.forward = 1.0;
  c.backwardInput = 1.0;
  c.backwardWeight = 1.0;
  return c;
}

layout::Layout pipelineLayout(layout::ScheduleKind schedule) {
  layout::Layout l;
  l.model = *layout::modelPreset("small");  // 4 layers: one per stage
  l.pp = 4;
  l.dp = 2;
  l.microBatches = 8;
  l.steps = 3;
  l.schedule = schedule;
  return l;
}

struct Simulated {
  RunReport report;
  std::vector<trace_model::Event> events;
};

Simulated simulateAndAnalyze(const layout::Layout& l, const layout::CostModel& costs) {
  testing::TempDir dir;
  const std::string path = dir.file("sim.db");
  Simulated out;
  {
    auto writer = storage::TraceWriter::open(path);
    EXPECT_TRUE(writer.isOk()) << writer.status().message();
    storage::SimulatedRunOptions options;
    options.costs = costs;
    auto run = storage::writeSimulatedRun(**writer, l, options);
    EXPECT_TRUE(run.isOk()) << run.status().message();
  }
  auto reader = storage::TraceReader::open(path);
  EXPECT_TRUE(reader.isOk()) << reader.status().message();
  auto report = analyzeRun(**reader, 1);
  EXPECT_TRUE(report.isOk()) << report.status().message();
  out.report = *report;
  auto events = (*reader)->eventsInWindow(1, {}, INT64_MIN / 2, INT64_MAX / 2);
  EXPECT_TRUE(events.isOk()) << events.status().message();
  if (events.isOk()) out.events = *events;
  return out;
}

TEST(SimulatedRunTest, OneFOneBStagesHaveTheFormulaBubble) {
  const Simulated s =
      simulateAndAnalyze(pipelineLayout(layout::ScheduleKind::kOneFOneB), formulaCosts());
  EXPECT_TRUE(s.report.run.info.simulated);
  ASSERT_EQ(s.report.stages.size(), 4u);
  const double formula = 3.0 / 11.0;  // (p-1)/(m+p-1), p = 4, m = 8
  for (const StageReport& stage : s.report.stages) {
    ASSERT_TRUE(stage.bubbleFraction.has_value()) << "stage " << stage.stage;
    EXPECT_NEAR(*stage.bubbleFraction, formula, 1e-9) << "stage " << stage.stage;
    ASSERT_TRUE(stage.bubbleFormula.has_value());
    EXPECT_NEAR(*stage.bubbleFormula, formula, 1e-12);
  }
}

TEST(SimulatedRunTest, ZeroBubbleH1StagesHaveLessBubbleThanOneFOneB) {
  const Simulated s =
      simulateAndAnalyze(pipelineLayout(layout::ScheduleKind::kZeroBubbleH1), formulaCosts());
  ASSERT_EQ(s.report.stages.size(), 4u);
  double mean = 0;
  for (const StageReport& stage : s.report.stages) {
    ASSERT_TRUE(stage.bubbleFraction.has_value());
    EXPECT_LT(*stage.bubbleFraction, 3.0 / 11.0 - 0.05) << "stage " << stage.stage;
    mean += *stage.bubbleFraction / 4;
  }
  // The stages' mean is the simulator's own bubble fraction of the schedule.
  const layout::Schedule schedule =
      *layout::scheduleFor(pipelineLayout(layout::ScheduleKind::kZeroBubbleH1));
  EXPECT_NEAR(mean, layout::simulate(schedule, formulaCosts())->bubbleFraction, 1e-9);
}

TEST(SimulatedRunTest, ReceivesSplitIntoWaitAndTransferAndCollectivesRunOverDp) {
  layout::CostModel costs = formulaCosts();
  costs.comm = 0.25;
  costs.gradSync = 1.5;
  costs.optimizer = 0.5;
  const Simulated s = simulateAndAnalyze(pipelineLayout(layout::ScheduleKind::kOneFOneB), costs);
  int64_t recvs = 0, waits = 0, allReduces = 0, forwards = 0;
  for (const trace_model::Event& e : s.events) {
    if (e.kind == EventKind::kRecv) {
      ++recvs;
      EXPECT_LE(e.endNs - e.startNs, 250'000) << "a transfer lasts at most t_comm";
      EXPECT_GE(e.peer, 0);
    }
    waits += e.kind == EventKind::kWait;
    allReduces += e.kind == EventKind::kAllReduce;
    forwards += e.kind == EventKind::kForward;
  }
  // 8 ranks x 3 steps: 8 forwards each; 6 ranks x 8 activation and 6 x 8
  // gradient receives per step; one all-reduce per rank and step (dp = 2).
  EXPECT_EQ(forwards, 8 * 3 * 8);
  EXPECT_EQ(recvs, 3 * (6 * 8 + 6 * 8));
  EXPECT_GT(waits, 0);
  EXPECT_EQ(allReduces, 8 * 3);
  // Communication costs more than the formula assumes: a bigger bubble.
  for (const StageReport& stage : s.report.stages) {
    EXPECT_GT(*stage.bubbleFraction, 3.0 / 11.0) << "stage " << stage.stage;
  }
}

TEST(SimulatedRunTest, BadCostsAndLayoutsAreErrorsThatLeaveNoRun) {
  testing::TempDir dir;
  auto writer = storage::TraceWriter::open(dir.file("bad.db"));
  ASSERT_TRUE(writer.isOk());
  storage::SimulatedRunOptions options;
  options.costs.comm = -1;
  auto run =
      storage::writeSimulatedRun(**writer, pipelineLayout(layout::ScheduleKind::kGPipe), options);
  ASSERT_FALSE(run.isOk());
  EXPECT_NE(run.status().message().find(">= 0"), std::string::npos) << run.status().message();
  layout::Layout tooDeep = pipelineLayout(layout::ScheduleKind::kGPipe);
  tooDeep.pp = 8;  // 4 layers
  run = storage::writeSimulatedRun(**writer, tooDeep, {});
  ASSERT_FALSE(run.isOk());
  EXPECT_NE(run.status().message().find("layers"), std::string::npos) << run.status().message();
}

}  // namespace
}  // namespace bubblescope::analysis
