#include "engine/layout/stage_split.h"

#include <gtest/gtest.h>

#include <numeric>

namespace bubblescope::layout {
namespace {

using V = std::vector<int32_t>;

LayerCosts uniform(int32_t layers, double embedding, double head) {
  LayerCosts c;
  c.embedding = embedding;
  c.layers.assign(layers, 1.0);
  c.head = head;
  return c;
}

TEST(StageSplit, EqualLayersSplitEvenly) {
  EXPECT_EQ(splitByCost(uniform(8, 0, 0), 4).value(), (V{2, 2, 2, 2}));
  EXPECT_EQ(splitByCost(uniform(12, 0, 0), 1).value(), (V{12}));
  EXPECT_EQ(splitByCost(uniform(4, 0, 0), 4).value(), (V{1, 1, 1, 1}));
}

TEST(StageSplit, TheHeadAndEmbeddingTakeLayersAwayFromTheirStages) {
  // 8 layers + head 2 on the last chunk: 5 | 3 + 2.
  EXPECT_EQ(splitByCost(uniform(8, 0, 2), 2).value(), (V{5, 3}));
  // Embedding 2 on the first chunk, head 2 on the last: 4 | 4 stays balanced.
  EXPECT_EQ(splitByCost(uniform(8, 2, 2), 2).value(), (V{4, 4}));
  // 10 layers, embedding 3, into 4: bottleneck 4 = embedding + one layer.
  const V split = splitByCost(uniform(10, 3, 0), 4).value();
  EXPECT_EQ(split, (V{1, 3, 3, 3}));
}

TEST(StageSplit, MinimisesTheBottleneckForUnevenLayers) {
  LayerCosts c;
  c.layers = {5, 1, 1, 1, 1, 1, 4, 1};
  // The only split with bottleneck 5: [5] [1,1,1,1,1] [4,1].
  const V split = splitByCost(c, 3).value();
  EXPECT_EQ(split, (V{1, 5, 2}));
  EXPECT_EQ(std::accumulate(split.begin(), split.end(), 0), 8);
  size_t at = 0;
  double worst = 0;
  for (int32_t n : split) {
    double sum = 0;
    for (int32_t i = 0; i < n; ++i) sum += c.layers[at++];
    worst = std::max(worst, sum);
  }
  EXPECT_DOUBLE_EQ(worst, 5.0);
}

TEST(StageSplit, ModelCostsFollowTheFlopCount) {
  const ModelConfig small = modelPreset("small").value();  // C 256, T 128, V 256, 4 layers
  const LayerCosts costs = layerCostsFor(small);
  ASSERT_EQ(costs.layers.size(), 4u);
  EXPECT_DOUBLE_EQ(costs.layers[0], 24.0 * 256 * 256 + 4.0 * 128 * 256);
  EXPECT_DOUBLE_EQ(costs.head, 2.0 * 256 * 256);
  EXPECT_DOUBLE_EQ(costs.embedding, 2.0 * 256);
  EXPECT_EQ(stageSplit(small, 2, 1).value(), (V{2, 2}));
  EXPECT_EQ(stageSplit(small, 4, 1).value(), (V{1, 1, 1, 1}));
}

TEST(StageSplit, ExplicitSplitOverridesAndIsChecked) {
  const ModelConfig small = modelPreset("small").value();
  EXPECT_EQ(stageSplit(small, 2, 1, {3, 1}).value(), (V{3, 1}));
  EXPECT_EQ(stageSplit(small, 2, 1, {3, 2}).status().message(),
            "stage_layers sums to 5 but the model has 4 layers");
  EXPECT_EQ(stageSplit(small, 2, 2, {3, 1}).status().message(),
            "stage_layers has 2 entries, expected pp x virtual_chunks = 4");
  EXPECT_EQ(stageSplit(small, 2, 1, {4, 0}).status().message(),
            "stage_layers entries must be >= 1");
}

TEST(StageSplit, RejectsTooFewLayers) {
  EXPECT_EQ(splitByCost(uniform(3, 0, 0), 4).status().message(),
            "cannot split 3 layers into 4 chunks of at least one layer");
}

TEST(StageSplit, FirstLayersArePrefixSums) {
  EXPECT_EQ(firstLayers({2, 3, 1}), (V{0, 2, 5}));
}

}  // namespace
}  // namespace bubblescope::layout
