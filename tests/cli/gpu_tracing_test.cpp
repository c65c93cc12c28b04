// When a traced rank starts its CUPTI collector (cli/gpu_tracing.h): on a
// GPU placement only, the same for single-process `train --trace` and the
// ranks of a layout; without a GPU the start is a note and a null source.
#include "cli/gpu_tracing.h"

#include <gtest/gtest.h>

#include "engine/parallel/data_parallel.h"

namespace bubblescope::cli {
namespace {

TEST(GpuTracingTest, OnlyAGpuPlacementTracesGpuActivity) {
  EXPECT_TRUE(tracesGpuActivity("cuda:0"));
  EXPECT_TRUE(tracesGpuActivity("cuda:7"));
  EXPECT_TRUE(tracesGpuActivity("cuda:12"));
  EXPECT_FALSE(tracesGpuActivity("cpu"));
  EXPECT_FALSE(tracesGpuActivity("cuda:"));
  EXPECT_FALSE(tracesGpuActivity("cuda"));
  EXPECT_FALSE(tracesGpuActivity("cuda:x"));
  EXPECT_FALSE(tracesGpuActivity("NVIDIA H200"));  // a description, not a placement
  EXPECT_FALSE(tracesGpuActivity(""));
}

TEST(GpuTracingTest, ACpuRankStartsNoCollector) {
  EXPECT_EQ(startGpuActivity("cpu", 0), nullptr);
}

// On a machine without a GPU (or a build without CUDA) a GPU rank's collector
// does not start: a null source (the run traces host spans), never a crash.
// With a GPU it starts; either way one collector per process at a time.
TEST(GpuTracingTest, AGpuRankStartsItsCollectorOrSaysWhy) {
  auto source = startGpuActivity("cuda:0", 0);
  if (source == nullptr)
    GTEST_SKIP() << "no GPU here: the collector did not start (a note said why)";
  EXPECT_TRUE(source->clockPairs(1).size() == 1u);
}

// The dimension the dp group's device streams are tagged with is the one its
// collectives' host spans carry: zero once ZeRO shards the optimizer.
TEST(GpuTracingTest, TheDpGroupsKernelsTakeTheDimensionOfItsSpans) {
  using layout::ZeroStage;
  using trace_model::ParallelDim;
  EXPECT_EQ(engine::dataParallelDim(ZeroStage::kNone), ParallelDim::kDp);
  EXPECT_EQ(engine::dataParallelDim(ZeroStage::kOptimizer), ParallelDim::kZero);
  EXPECT_EQ(engine::dataParallelDim(ZeroStage::kGradients), ParallelDim::kZero);
  EXPECT_EQ(engine::dataParallelDim(ZeroStage::kParameters), ParallelDim::kZero);
}

}  // namespace
}  // namespace bubblescope::cli
