// MpiGrid on 4 ranks: dp 2 x tp 2 groups match the coordinate math.
#include <gtest/gtest.h>

#include "engine/parallel/mpi_grid.h"

namespace bubblescope::engine {
namespace {

TEST(MpiGridTest, GroupsFollowTheCoordinates) {
  auto made = MpiGrid::create(MPI_COMM_WORLD, /*dp=*/2, /*pp=*/1, /*tp=*/2);
  ASSERT_TRUE(made.isOk()) << made.status().toString();
  MpiGrid& g = **made;
  const auto& grid = g.grid();
  EXPECT_EQ(g.dp().worldRanks(), grid.dpGroup(g.rank()));
  EXPECT_EQ(g.tp().worldRanks(), grid.tpGroup(g.rank()));
  EXPECT_EQ(g.pp().worldRanks(), grid.ppGroup(g.rank()));
  EXPECT_EQ(g.dp().rank(), g.coord().dp);
  EXPECT_EQ(g.tp().rank(), g.coord().tp);
  EXPECT_EQ(g.world().size(), 4);
  EXPECT_EQ(g.dp().dim(), trace_model::ParallelDim::kDp);
  EXPECT_EQ(g.tp().dim(), trace_model::ParallelDim::kTp);
  // A tp all-reduce sums over neighbouring ranks only.
  std::vector<float> v = {static_cast<float>(g.rank())};
  ASSERT_TRUE(g.tp().allReduce(v).isOk());
  const int32_t base = g.rank() / 2 * 2;
  EXPECT_EQ(v[0], static_cast<float>(base + base + 1));
}

TEST(MpiGridTest, AWorldOfTheWrongSizeIsAnError) {
  auto made = MpiGrid::create(MPI_COMM_WORLD, 3, 1, 1);
  ASSERT_FALSE(made.isOk());
  EXPECT_EQ(made.status().message(), "world size 4 does not match dp 3 x tp 1 x pp 1 = 3");
}

}  // namespace
}  // namespace bubblescope::engine
