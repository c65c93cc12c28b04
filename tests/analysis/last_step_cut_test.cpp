// HTA's last-step cut (last_step_cut.h), which the GPU time and the GPU
// kernel tables share: the verdicts with the steps given ahead and read
// from the events.
#include "storage/analysis/last_step_cut.h"

#include <gtest/gtest.h>

namespace bubblescope::analysis {
namespace {

using Verdict = LastStepCut::Verdict;

trace_model::Event stepEvent(const char* name, int64_t startNs) {
  trace_model::Event e;
  e.lane = trace_model::hostThreadLane(0);
  e.kind = trace_model::EventKind::kOther;
  e.name = name;
  e.startNs = startNs;
  e.endNs = startNs + 100;
  return e;
}

TEST(LastStepCutTest, WithTheLastStepEveryRecordIsKept) {
  LastStepCut cut(true, std::vector<trace_model::StepWindow>{{1, 0, 100}, {2, 100, 200}});
  EXPECT_EQ(cut.judge(150, 160), Verdict::kKept);
  EXPECT_EQ(cut.judge(std::nullopt, 1000), Verdict::kKept);
  EXPECT_EQ(cut.steps(), 2);
}

TEST(LastStepCutTest, StepsGivenAheadCutWhatWasLaunchedInTheLastOne) {
  LastStepCut cut(false, std::vector<trace_model::StepWindow>{{1, 0, 100}, {2, 100, 200}});
  EXPECT_EQ(cut.judge(99, 150), Verdict::kKept) << "launched before the last step began";
  EXPECT_EQ(cut.judge(100, 150), Verdict::kCut);
  EXPECT_EQ(cut.judge(std::nullopt, 99), Verdict::kKept) << "no launch: its own start";
  EXPECT_EQ(cut.judge(std::nullopt, 100), Verdict::kCut);
  EXPECT_FALSE(cut.step(stepEvent("ProfilerStep#3", 300))) << "the steps are known ahead";
}

TEST(LastStepCutTest, StepsFromTheEventsLeaveTheLatestStepsWorkPending) {
  LastStepCut cut(false, std::nullopt);
  EXPECT_FALSE(cut.step(stepEvent("forward", 0)));
  EXPECT_TRUE(cut.step(stepEvent("ProfilerStep#1", 100)));
  EXPECT_EQ(cut.judge(50, 120), Verdict::kKept);
  EXPECT_EQ(cut.judge(110, 120), Verdict::kPending) << "kept only if another step begins";
  trace_model::Event gpu = stepEvent("ProfilerStep#2", 200);
  gpu.lane = trace_model::gpuStreamLane(7);
  EXPECT_FALSE(cut.step(gpu)) << "only host threads carry ProfilerSteps";
  EXPECT_TRUE(cut.step(stepEvent("ProfilerStep#2", 200)));
  EXPECT_EQ(cut.judge(110, 220), Verdict::kKept);
  EXPECT_EQ(cut.steps(), 2);
}

TEST(LastStepCutTest, TheHeadingsSayWhichRecordsAreCovered) {
  EXPECT_EQ(coveredGpuRecords(false, false),
            "every GPU record (fewer than two ProfilerSteps: no launch cut)");
  EXPECT_EQ(coveredGpuRecords(true, true),
            "the work launched in the trace, last ProfilerStep included");
  EXPECT_EQ(coveredGpuRecords(true, false), "the work launched before the last ProfilerStep");
}

}  // namespace
}  // namespace bubblescope::analysis
