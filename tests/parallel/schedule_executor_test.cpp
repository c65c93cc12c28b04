// The ScheduleExecutor runs what the op list says, the gradient collective and
// the optimizer step included, and refuses a list that lacks them.
#include "engine/parallel/schedule_executor.h"

#include <gtest/gtest.h>

#include "engine/cpu_backend.h"
#include "engine/layout/schedule.h"
#include "engine/parallel/local_gradients.h"

namespace bubblescope::engine {
namespace {

using layout::Op;
using layout::OpType;

struct OneProcess {
  TrainerOptions options;
  CpuBackend backend;
  std::unique_ptr<GptModel> model;
  std::unique_ptr<LocalGradients> sync;
  std::unique_ptr<DataLoader> loader;
  std::unique_ptr<ScheduleExecutor> executor;

  OneProcess() {
    options.model = layout::modelPreset("tiny").value();
    options.batchSize = 2;
    options.microBatches = 2;
    std::string source;
    loader = std::make_unique<DataLoader>(createDataLoader(options, source).value());
    model = std::move(GptModel::create(options.model, backend).value());
    model->initialize(options.seed);
    sync = std::make_unique<LocalGradients>(*model, backend, options.optimizer);
    executor = std::make_unique<ScheduleExecutor>(
        std::vector<ExecutorChunk>{{model.get(), sync.get()}}, 0, 1, ExecutorGroups{}, *loader,
        backend.allocator(), options, false);
  }
  std::vector<Op> ops() const { return layout::oneFOneB(1, 2).value().stageOps[0]; }
};

std::vector<float> firstWeights(GptModel& model) {
  const auto span = model.parameters().front()->value.span();
  return {span.begin(), span.end()};
}

TEST(ScheduleExecutorTest, TheOptimizerStepOpUpdatesTheWeights) {
  OneProcess p;
  const std::vector<float> before = firstWeights(*p.model);
  auto outcome = p.executor->runStep(p.ops(), {});
  ASSERT_TRUE(outcome.isOk()) << outcome.status().toString();
  EXPECT_GT(outcome->lossSum, 0.0);
  EXPECT_GT(outcome->gradNorm, 0.0);
  EXPECT_EQ(outcome->lr, p.options.schedule.at(0));
  EXPECT_NE(firstWeights(*p.model), before);
  EXPECT_EQ(p.sync->optimizer().stepCount(), 1);
}

TEST(ScheduleExecutorTest, AListWithoutItsCollectiveOrOptimizerStepIsRefused) {
  OneProcess p;
  const std::vector<float> before = firstWeights(*p.model);
  std::vector<Op> noOptimizer = p.ops();
  noOptimizer.pop_back();
  std::vector<Op> noCollective = p.ops();
  noCollective.erase(noCollective.end() - 2);
  std::vector<Op> collectiveTooEarly = p.ops();
  std::rotate(collectiveTooEarly.begin(), collectiveTooEarly.end() - 2,
              collectiveTooEarly.end() - 1);  // the collective before every backward
  for (const auto& ops : {noOptimizer, noCollective, collectiveTooEarly}) {
    auto outcome = p.executor->runStep(ops, {});
    ASSERT_FALSE(outcome.isOk());
    EXPECT_EQ(outcome.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(outcome.status().message().find("one gradient collective after its last backward"),
              std::string::npos)
        << outcome.status().message();
  }
  EXPECT_EQ(firstWeights(*p.model), before);  // nothing ran
}

// A process alone trains as ZeRO 0: a list written for ZeRO 2 (one
// ReduceScatterGrads per micro-batch, an AllGatherParams) or for ZeRO 1 does
// not describe what it runs, and is refused before anything runs.
TEST(ScheduleExecutorTest, AListOfAnotherZeroStageIsRefused) {
  OneProcess p;
  const std::vector<float> before = firstWeights(*p.model);
  for (layout::ZeroStage zero : {layout::ZeroStage::kOptimizer, layout::ZeroStage::kGradients}) {
    const auto ops = layout::oneFOneB(1, 2, zero).value().stageOps[0];
    auto outcome = p.executor->runStep(ops, {});
    ASSERT_FALSE(outcome.isOk());
    EXPECT_EQ(outcome.status().code(), StatusCode::kInvalidArgument);
  }
  auto zeroTwo = layout::oneFOneB(1, 2, layout::ZeroStage::kGradients).value().stageOps[0];
  EXPECT_EQ(p.executor->runStep(zeroTwo, {}).status().message(),
            "stage 0's op list must hold one gradient collective after its last backward");
  EXPECT_EQ(firstWeights(*p.model), before);  // nothing ran
}

}  // namespace
}  // namespace bubblescope::engine
