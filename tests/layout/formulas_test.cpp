// The formulas of planning/formulas.h: exact values from docs/formulas.md.
// (Against the engine: tests/parallel/zero_formula_test.cpp.)
#include "planning/formulas.h"

#include <gtest/gtest.h>

namespace bubblescope::layout {
namespace {

Layout pipeline(ScheduleKind kind, int32_t p, int32_t m, int32_t v = 1) {
  Layout l;
  l.model.numLayers = 8;
  l.pp = p;
  l.schedule = kind;
  l.microBatches = m;
  l.virtualChunks = v;
  return l;
}

TEST(FormulasTest, BubbleFractions) {
  EXPECT_DOUBLE_EQ(formulaBubble(ScheduleKind::kGPipe, 4, 8), 3.0 / 11.0);
  EXPECT_DOUBLE_EQ(formulaBubble(ScheduleKind::kOneFOneB, 4, 8), 3.0 / 11.0);
  EXPECT_DOUBLE_EQ(formulaBubble(ScheduleKind::kInterleaved, 4, 8, 2), 3.0 / 19.0);
  EXPECT_DOUBLE_EQ(formulaBubble(ScheduleKind::kZeroBubbleH1, 4, 8), 3.0 / 27.0);
  EXPECT_DOUBLE_EQ(formulaBubble(ScheduleKind::kOneFOneB, 1, 8), 0.0);
}

TEST(FormulasTest, BubbleOfALayoutAndItsText) {
  EXPECT_DOUBLE_EQ(formulaBubble(pipeline(ScheduleKind::kGPipe, 2, 2)), 1.0 / 3.0);
  EXPECT_EQ(bubbleFormulaText(pipeline(ScheduleKind::kGPipe, 2, 2)), "(p-1)/(m+p-1) = 1/3 = 0.333");
  EXPECT_EQ(bubbleFormulaText(pipeline(ScheduleKind::kInterleaved, 4, 8, 2)),
            "(p-1)/(v*m+p-1) = 3/19 = 0.158");
  EXPECT_EQ(bubbleFormulaText(pipeline(ScheduleKind::kZeroBubbleH1, 4, 8)),
            "(p-1)/(3m+p-1) = 3/27 = 0.111");
  // v counts only for interleaved.
  Layout l = pipeline(ScheduleKind::kOneFOneB, 4, 8);
  l.virtualChunks = 2;
  EXPECT_DOUBLE_EQ(formulaBubble(l), 3.0 / 11.0);
  EXPECT_DOUBLE_EQ(formulaBubble(Layout{}), 0.0);
  EXPECT_EQ(bubbleFormulaText(Layout{}), "one stage: 0");
}

TEST(FormulasTest, ParameterCountIsTheSumOfItsSlots) {
  for (const std::string& name : modelPresetNames()) {
    const ModelConfig c = modelPreset(name).value();
    EXPECT_EQ(c.parameterCount(), c.embeddingParameterCount() +
                                      c.numLayers * c.blockParameterCount() +
                                      c.headParameterCount())
        << name;
    EXPECT_EQ(
        largestSlotParameters(c),
        std::max({c.embeddingParameterCount(), c.blockParameterCount(), c.headParameterCount()}));
  }
  // GPT-2 124M as the engine builds it (untied head): 124,439,808 + 38,597,376.
  EXPECT_EQ(modelPreset("gpt2-124m").value().parameterCount(), 124439808 + 50257 * 768);
  Layout l;
  l.tp = 2;
  l.pp = 2;
  EXPECT_DOUBLE_EQ(parametersPerRank(l), l.model.parameterCount() / 4.0);
}

TEST(FormulasTest, ZeroModelStatesKept) {
  // fp32 Adam: 4Ψ + 4Ψ + 8Ψ, sharded by N_d per stage (docs/formulas.md).
  Layout l;
  l.dp = 4;
  auto total = [&](ZeroStage s) {
    l.zeroStage = s;
    const ModelStateBytes b = zeroModelStateBytes(l, 1000);
    return b.parameters + b.gradients + b.optimizer;
  };
  EXPECT_DOUBLE_EQ(total(ZeroStage::kNone), 16000);
  EXPECT_DOUBLE_EQ(total(ZeroStage::kOptimizer), 4000 + 4000 + 2000);
  EXPECT_DOUBLE_EQ(total(ZeroStage::kGradients), 4000 + 3000);
  EXPECT_DOUBLE_EQ(total(ZeroStage::kParameters), 4000);
}

TEST(FormulasTest, ZeroTransients) {
  Layout l;  // tiny (C 32, V 256): a block (12C² + 13C) is the largest slot
  l.dp = 4;
  l.bucketElements = 3000;
  const double slot = static_cast<double>(largestSlotParameters(l.model));
  EXPECT_EQ(largestSlotParameters(l.model), 12 * 32 * 32 + 13 * 32);
  l.zeroStage = ZeroStage::kNone;
  EXPECT_DOUBLE_EQ(zeroModelStateBytes(l, 1000).transientGradients, 0);
  l.zeroStage = ZeroStage::kOptimizer;  // every reduced piece: the shard, rounded up
  EXPECT_DOUBLE_EQ(zeroModelStateBytes(l, 1001).transientGradients, 4 * 251);
  EXPECT_DOUBLE_EQ(zeroModelStateBytes(l, 1001).transientParameters, 0);
  l.zeroStage = ZeroStage::kParameters;
  const ModelStateBytes b = zeroModelStateBytes(l, 100000);
  EXPECT_DOUBLE_EQ(b.transientParameters, 4 * slot);
  // Slot + 4 bucket copies (3 launched, 1 filling) + 3 reduced pieces, each up
  // to a whole bucket (a bucket inside this rank's shard of 25000).
  EXPECT_DOUBLE_EQ(b.transientGradients, 4 * (slot + 4 * 3000 + 3 * 3000));
  l.bucketElements = 100000;  // a piece is at most the shard
  EXPECT_DOUBLE_EQ(zeroModelStateBytes(l, 100000).transientGradients,
                   4 * (slot + 4 * 100000 + 3 * 25000));
  l.bucketElements = 3000;
  l.overlap = false;  // every bucket and every piece at the step's end
  EXPECT_DOUBLE_EQ(zeroModelStateBytes(l, 100000).transientGradients, 4 * (slot + 100000 + 25000));
}

TEST(FormulasTest, DataParallelVolumePerStage) {
  Layout l;
  l.dp = 4;
  l.microBatches = 3;
  const double psi = 1000, scalar = 2 * 8;  // an all-reduced double counts 16 bytes
  auto volume = [&](ZeroStage s) {
    l.zeroStage = s;
    return dataParallelVolumeBytes(l, psi);
  };
  EXPECT_DOUBLE_EQ(volume(ZeroStage::kNone), 4 * 2 * psi + scalar);           // all-reduce + loss
  EXPECT_DOUBLE_EQ(volume(ZeroStage::kOptimizer), 4 * 2 * psi + 2 * scalar);  // + norm
  EXPECT_DOUBLE_EQ(volume(ZeroStage::kGradients), 4 * (3 + 1) * psi + 2 * scalar);
  EXPECT_DOUBLE_EQ(volume(ZeroStage::kParameters), 4 * 3 * 3 * psi + 2 * scalar);
  // One micro-batch: ZeRO's 2Ψ and 3Ψ.
  l.microBatches = 1;
  EXPECT_DOUBLE_EQ(volume(ZeroStage::kGradients), 4 * 2 * psi + 2 * scalar);
  EXPECT_DOUBLE_EQ(volume(ZeroStage::kParameters), 4 * 3 * psi + 2 * scalar);
  // Recompute (pipeline layouts) gathers once more per micro-batch.
  l.pp = 2;
  l.recompute = true;
  EXPECT_DOUBLE_EQ(volume(ZeroStage::kParameters), 4 * 4 * psi + 2 * scalar);
  l.recompute = false;
  // Interleaved: a norm per model chunk.
  l.pp = 2;
  l.schedule = ScheduleKind::kInterleaved;
  l.virtualChunks = 2;
  EXPECT_DOUBLE_EQ(volume(ZeroStage::kOptimizer), 4 * 2 * psi + 3 * scalar);
  l.dp = 1;
  EXPECT_DOUBLE_EQ(volume(ZeroStage::kParameters), 0);
  // Hierarchical, dp 4 in emulated nodes of 2: Ψ + 2Ψ/2 + Ψ; in nodes of 4
  // ranks at tp 2 (2 dp ranks a node) the same; on one host, K = dp = 4.
  l = Layout{};
  l.dp = 4;
  l.allReduce = AllReduceAlgorithm::kHierarchical;
  l.ranksPerNode = 2;
  EXPECT_DOUBLE_EQ(volume(ZeroStage::kNone), 4 * 3 * psi + scalar);
  l.dp = 2;
  l.tp = 2;
  l.ranksPerNode = 4;
  EXPECT_DOUBLE_EQ(volume(ZeroStage::kNone), 4 * 3 * psi + scalar);
  l = Layout{};
  l.dp = 4;
  l.allReduce = AllReduceAlgorithm::kHierarchical;
  EXPECT_DOUBLE_EQ(volume(ZeroStage::kNone), 4 * 2.5 * psi + scalar);
  l.hosts = {"a:1", "b:1", "c:1", "d:1"};  // one dp rank a node: all of it crosses
  EXPECT_DOUBLE_EQ(volume(ZeroStage::kNone), 4 * 4 * psi + scalar);
}

TEST(FormulasTest, TensorAndPipelineVolumes) {
  Layout l;  // tiny: T 32, C 32, L 2
  l.microBatchSize = 2;
  l.microBatches = 4;
  EXPECT_DOUBLE_EQ(tensorParallelVolumeBytes(l), 0);
  l.tp = 2;
  const double bsh = 2.0 * 32 * 32;
  EXPECT_DOUBLE_EQ(tensorParallelVolumeBytes(l), 4 * 8 * bsh * 2 * 4);
  l.tp = 1;
  l.pp = 2;
  // Each stage has one boundary end: b·s·h forward and backward per micro-batch.
  EXPECT_DOUBLE_EQ(pipelineVolumeBytes(l, 0), 4 * 2 * bsh * 4);
  EXPECT_DOUBLE_EQ(pipelineVolumeBytes(l, 1), 4 * 2 * bsh * 4);
  l.model.numLayers = 4;
  l.schedule = ScheduleKind::kInterleaved;
  l.virtualChunks = 2;
  // Chunks 0 and 2 on stage 0: ends 1 + 2; stage 1 holds chunks 1 and 3: 2 + 1.
  EXPECT_DOUBLE_EQ(pipelineVolumeBytes(l, 0), 4 * 2 * 3 * bsh * 4);
  EXPECT_DOUBLE_EQ(pipelineVolumeBytes(l, 1), 4 * 2 * 3 * bsh * 4);
}

}  // namespace
}  // namespace bubblescope::layout
