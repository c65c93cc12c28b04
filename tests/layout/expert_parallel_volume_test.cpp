// The ep all-to-all volume formula on numbers worked by hand.
#include "planning/expert_parallel_volume.h"

#include <gtest/gtest.h>

namespace bubblescope::layout {
namespace {

TEST(ExpertParallelVolumeTest, FourDataAllToAllsAndTheCounts) {
  // T = 32 tokens, k = 2, C = 64, E = 8: 4·2·32·64 + 8 = 16392 elements,
  // 65568 B per block and micro-batch; × 3 micro-batches × 2 blocks, + the
  // 8 B gradient norm.
  const EpVolumeInput in{.tokensPerMicroBatch = 32,
                         .topK = 2,
                         .hidden = 64,
                         .experts = 8,
                         .ep = 4,
                         .moeBlocks = 2,
                         .microBatches = 3};
  EXPECT_DOUBLE_EQ(epBlockMicroBatchBytes(in), 65568.0);
  EXPECT_DOUBLE_EQ(epVolumeBytesPerStep(in), 393416.0);
  EXPECT_DOUBLE_EQ(epOffRankShare(4), 0.75);
  EXPECT_DOUBLE_EQ(epOffRankShare(2), 0.5);
  EXPECT_DOUBLE_EQ(epOffRankShare(1), 0.0);
  EpVolumeInput one = in;
  one.ep = 1;  // no all-to-all at all
  EXPECT_DOUBLE_EQ(epVolumeBytesPerStep(one), 0.0);
}

TEST(ExpertParallelVolumeTest, MoeBlocksFollowTheStageSplit) {
  Layout l;
  l.model.numLayers = 4;
  l.model.experts = 4;
  l.model.moeEvery = 2;  // blocks 1 and 3
  EXPECT_EQ(moeBlocksOnStage(l, 0), 2);
  l.pp = 2;
  l.stageLayers = {3, 1};  // stage 0: layers 0-2 (block 1), stage 1: layer 3
  EXPECT_EQ(moeBlocksOnStage(l, 0), 1);
  EXPECT_EQ(moeBlocksOnStage(l, 1), 1);
  l.model.moeEvery = 1;  // every layer
  EXPECT_EQ(moeBlocksOnStage(l, 0), 3);
  EXPECT_EQ(moeBlocksOnStage(l, 1), 1);
  EXPECT_EQ(moeBlocksOnStage(l, 2), 0);  // no such stage
  l.microBatchSize = 2;
  l.model.seqLen = 16;
  const EpVolumeInput in = epVolumeInput(l, 2, 1);
  EXPECT_EQ(in.tokensPerMicroBatch, 32);
  EXPECT_EQ(in.moeBlocks, 1);
  EXPECT_EQ(in.ep, 2);
  EXPECT_EQ(in.experts, 4);
}

}  // namespace
}  // namespace bubblescope::layout
