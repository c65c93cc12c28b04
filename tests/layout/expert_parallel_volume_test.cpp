// The ep all-to-all volume formula on numbers worked by hand.
#include "engine/layout/expert_parallel_volume.h"

#include <gtest/gtest.h>

namespace bubblescope::layout {
namespace {

TEST(ExpertParallelVolumeTest, FourAllToAllsOfOffRankAssignments) {
  // T = 32 tokens, k = 2, C = 64, ep 4: 2·32·64·(3/4) = 3072 elements, 12288 B
  // per all-to-all; 4 per block and micro-batch; × 3 micro-batches × 2 blocks.
  const EpVolumeInput in{.tokensPerMicroBatch = 32,
                         .topK = 2,
                         .hidden = 64,
                         .ep = 4,
                         .moeBlocks = 2,
                         .microBatches = 3};
  EXPECT_DOUBLE_EQ(epAllToAllBytes(in), 12288.0);
  EXPECT_DOUBLE_EQ(epBlockMicroBatchBytes(in), 49152.0);
  EXPECT_DOUBLE_EQ(epVolumeBytesPerStep(in), 294912.0);
  EpVolumeInput two = in;
  two.ep = 2;  // half of the assignments leave the rank
  EXPECT_DOUBLE_EQ(epAllToAllBytes(two), 8192.0);
  EpVolumeInput one = in;
  one.ep = 1;  // nothing crosses a link
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
  const EpVolumeInput in = epVolumeInput(l, 4, 1);
  EXPECT_EQ(in.tokensPerMicroBatch, 32);
  EXPECT_EQ(in.moeBlocks, 1);
  EXPECT_EQ(in.ep, 4);
}

}  // namespace
}  // namespace bubblescope::layout
