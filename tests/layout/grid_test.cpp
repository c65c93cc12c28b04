#include "engine/layout/grid.h"

#include <gtest/gtest.h>

#include <set>

namespace bubblescope::layout {
namespace {

using V = std::vector<int32_t>;

TEST(ProcessGrid, Dp2Pp2Tp2MatchesMegatronOrder) {
  const ProcessGrid g = ProcessGrid::create(2, 2, 2).value();
  EXPECT_EQ(g.worldSize(), 8);
  EXPECT_EQ(g.coordOf(5), (GridCoord{1, 0, 1}));
  EXPECT_EQ(g.rankOf({1, 0, 1}), 5);
  EXPECT_EQ(g.coordOf(2), (GridCoord{0, 1, 0}));
  // Tensor groups are neighbouring ranks; pipeline groups stride tp;
  // data-parallel groups stride pp·tp.
  EXPECT_EQ(g.tpGroup(5), (V{4, 5}));
  EXPECT_EQ(g.ppGroup(5), (V{5, 7}));
  EXPECT_EQ(g.dpGroup(5), (V{1, 5}));
  EXPECT_EQ(g.tpGroup(0), (V{0, 1}));
  EXPECT_EQ(g.ppGroup(0), (V{0, 2}));
  EXPECT_EQ(g.dpGroup(0), (V{0, 4}));
  EXPECT_EQ(g.prevStageRank(7), 5);
  EXPECT_EQ(g.nextStageRank(5), 7);
  EXPECT_EQ(g.prevStageRank(5), -1);
  EXPECT_EQ(g.nextStageRank(7), -1);
}

TEST(ProcessGrid, Tp4AndPp4Worlds) {
  const ProcessGrid tp4 = ProcessGrid::create(1, 1, 4).value();
  EXPECT_EQ(tp4.tpGroup(2), (V{0, 1, 2, 3}));
  EXPECT_EQ(tp4.dpGroup(2), (V{2}));
  const ProcessGrid pp4dp2 = ProcessGrid::create(2, 4, 1).value();
  EXPECT_EQ(pp4dp2.coordOf(6), (GridCoord{1, 2, 0}));
  EXPECT_EQ(pp4dp2.ppGroup(6), (V{4, 5, 6, 7}));
  EXPECT_EQ(pp4dp2.dpGroup(6), (V{2, 6}));
}

TEST(ProcessGrid, CoordinatesRoundTripAndGroupsPartitionTheWorld) {
  for (int32_t dp = 1; dp <= 3; ++dp) {
    for (int32_t pp = 1; pp <= 3; ++pp) {
      for (int32_t tp = 1; tp <= 4; ++tp) {
        const ProcessGrid g = ProcessGrid::create(dp, pp, tp).value();
        for (GridDim dim : {GridDim::kDp, GridDim::kPp, GridDim::kTp}) {
          std::set<int32_t> seen;
          std::set<int32_t> colors;
          for (int32_t r = 0; r < g.worldSize(); ++r) {
            const GridCoord c = g.coordOf(r);
            ASSERT_EQ(g.rankOf(c), r);
            ASSERT_TRUE(c.dp < dp && c.pp < pp && c.tp < tp);
            const V members = g.group(r, dim);
            ASSERT_EQ(static_cast<int32_t>(members.size()), g.size(dim));
            // member i has coordinate i in dim and equals r elsewhere
            for (int32_t i = 0; i < g.size(dim); ++i) {
              const GridCoord mc = g.coordOf(members[i]);
              EXPECT_EQ(ProcessGrid::coordIn(mc, dim), i);
              EXPECT_EQ(g.groupColor(members[i], dim), g.groupColor(r, dim));
            }
            colors.insert(g.groupColor(r, dim));
            if (ProcessGrid::coordIn(c, dim) == 0) seen.insert(members.begin(), members.end());
          }
          EXPECT_EQ(static_cast<int32_t>(seen.size()), g.worldSize());
          EXPECT_EQ(static_cast<int32_t>(colors.size()), g.worldSize() / g.size(dim));
          EXPECT_EQ(*colors.rbegin(), g.worldSize() / g.size(dim) - 1);
        }
      }
    }
  }
}

TEST(ProcessGrid, RejectsNonPositiveDegrees) {
  EXPECT_EQ(ProcessGrid::create(2, 0, 1).status().message(),
            "process grid degrees must be >= 1, got dp 2, pp 0, tp 1");
}

}  // namespace
}  // namespace bubblescope::layout
