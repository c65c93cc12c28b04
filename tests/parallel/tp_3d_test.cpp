// The engine's correctness rule (docs/design.md) for full 3D layouts: dp 2 × tp 2 × pp 2 on 8
// ranks (1f1b), with ZeRO 0 and ZeRO 1 over the dp group, matches the
// single-rank run on the same global batch (the tp slices reassembled, each
// stage against its own parameters).
#include "tp_fixture.h"

namespace bubblescope::engine::testing {
namespace {

TEST(ThreeDimensionalTest, Dp2Tp2Pp2MatchesSingleRank) {
  auto grid = MpiGrid::create(MPI_COMM_WORLD, 2, 2, 2);
  ASSERT_TRUE(grid.isOk()) << grid.status().toString();
  for (int32_t zero : {0, 1}) {
    expectPipelineMatches(layout::ScheduleKind::kOneFOneB, 2, zero, **grid);
  }
}

}  // namespace
}  // namespace bubblescope::engine::testing
