// Flat buffer arithmetic of data parallelism: slots, shards, buckets; tensor views.
#include "engine/parallel/flat_layout.h"

#include <gtest/gtest.h>

#include <numeric>

#include "engine/parallel/communicator.h"

namespace bubblescope::engine {
namespace {

std::unique_ptr<GptModel> tinyModel(Allocator* allocator) {
  return std::move(GptModel::create(layout::modelPreset("tiny").value(), allocator).value());
}

TEST(FlatLayoutTest, SlotsAreContiguousAndCoverEveryParameterInOrder) {
  Allocator allocator;
  auto model = tinyModel(&allocator);
  FlatLayout flat(*model);
  EXPECT_EQ(flat.total(), model->parameterCount());
  EXPECT_EQ(flat.total(), 42880);
  int64_t next = 0;
  for (const FlatEntry& e : flat.entries()) {
    EXPECT_EQ(e.range.lo, next) << e.param->name;
    next = e.range.hi;
  }
  const int32_t slots = model->slotCount();
  EXPECT_EQ(flat.slotRange(0).lo, 0);
  EXPECT_EQ(flat.slotRange(slots - 1).hi, flat.total());
  for (int32_t s = 1; s < slots; ++s) EXPECT_EQ(flat.slotRange(s).lo, flat.slotRange(s - 1).hi);
  EXPECT_EQ(flat.slotRange(0).size(), (256 + 32) * 32);  // wte + wpe
  EXPECT_TRUE(flat.slotRange(99).empty());
}

TEST(FlatLayoutTest, OverlappingSplitsARangeAtParameterBoundaries) {
  Allocator allocator;
  auto model = tinyModel(&allocator);
  FlatLayout flat(*model);
  const FlatRange range{8000, 8300};  // the end of wte and the start of wpe
  const auto pieces = flat.overlapping(range);
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(pieces[0].first->param->name, "wte.weight");
  EXPECT_EQ(pieces[0].second, (FlatRange{8000, 8192}));
  EXPECT_EQ(pieces[1].first->param->name, "wpe.weight");
  EXPECT_EQ(pieces[1].second, (FlatRange{8192, 8300}));
}

TEST(ShardPlanTest, ShardsPartitionTheBufferEvenly) {
  for (int64_t total : {0, 1, 7, 42880, 42883}) {
    for (int32_t n : {1, 2, 3, 4, 8}) {
      ShardPlan plan(total, n);
      int64_t next = 0;
      for (int32_t r = 0; r < n; ++r) {
        const FlatRange s = plan.shard(r);
        EXPECT_EQ(s.lo, next);
        EXPECT_LE(s.size(), total / n + 1);
        EXPECT_GE(s.size(), total / n);
        next = s.hi;
      }
      EXPECT_EQ(next, total);
      const auto counts = plan.countsFor({0, total});
      EXPECT_EQ(std::accumulate(counts.begin(), counts.end(), int64_t{0}), total);
    }
  }
}

TEST(ShardPlanTest, CountsOfARangeAreItsShareOfEachShard) {
  ShardPlan plan(100, 4);  // shards of 25
  EXPECT_EQ(plan.countsFor({20, 60}), (std::vector<int>{5, 25, 10, 0}));
  EXPECT_EQ(plan.countsFor({0, 0}), (std::vector<int>{0, 0, 0, 0}));
}

TEST(BucketPlanTest, BucketsAreCutFromTheEndAndCoverEverything) {
  const auto buckets = planBuckets(10, 4);
  ASSERT_EQ(buckets.size(), 3u);
  EXPECT_EQ(buckets[0], (FlatRange{6, 10}));
  EXPECT_EQ(buckets[1], (FlatRange{2, 6}));
  EXPECT_EQ(buckets[2], (FlatRange{0, 2}));
  EXPECT_EQ(planBuckets(10, 100).size(), 1u);
  EXPECT_TRUE(planBuckets(0, 4).empty());
}

TEST(EvenCountsTest, SplitsAsEvenlyAsPossible) {
  EXPECT_EQ(evenCounts(10, 4), (std::vector<int>{3, 3, 2, 2}));
}

TEST(TensorViewTest, AViewNeitherOwnsNorCountsItsBuffer) {
  Allocator allocator;
  Tensor owner({8}, MemoryCategory::kParameters, &allocator);
  {
    Tensor view = Tensor::view({2, 2}, owner.data() + 4);
    EXPECT_TRUE(view.isView());
    EXPECT_EQ(view.numel(), 4);
    view.data()[0] = 3.0f;
    Tensor moved = std::move(view);
    EXPECT_TRUE(moved.isView());
  }
  EXPECT_EQ(owner.data()[4], 3.0f);
  EXPECT_EQ(allocator.currentBytes(MemoryCategory::kParameters), 32);
  Tensor shapeOnly = Tensor::view({3, 5}, nullptr);
  EXPECT_TRUE(shapeOnly.empty());
  EXPECT_EQ(shapeOnly.numel(), 15);
  shapeOnly.zero();  // no buffer: nothing to do
}

}  // namespace
}  // namespace bubblescope::engine
