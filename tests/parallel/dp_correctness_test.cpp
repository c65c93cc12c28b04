// The engine's correctness rule (docs/design.md) for plain data parallelism: dp 2 and dp 4, with
// and without overlap, with bucket sizes that split layers, match the
// single-rank run on the same global batch.
#include "parallel_fixture.h"

namespace bubblescope::engine::testing {
namespace {

constexpr int kSteps = 5;

void expectMatchesSingleRank(const DpCase& c) {
  auto comm = dpGroup(c.dp);
  const RunResult got = runParallel(c, *comm, kSteps);
  expectAgreement(got, reference(c.dp, kSteps), describe(c));
}

// 1000 elements split every layer (a block holds 12,704 parameters) and
// even single parameters; 1 << 20 is one bucket for the whole tiny model.
TEST(DataParallelTest, Dp2MatchesSingleRank) {
  for (bool overlap : {true, false}) {
    for (int64_t bucket : {int64_t{1000}, int64_t{1} << 20}) {
      expectMatchesSingleRank({.dp = 2, .zero = 0, .overlap = overlap, .bucketElements = bucket});
    }
  }
}

TEST(DataParallelTest, Dp4MatchesSingleRank) {
  for (bool overlap : {true, false}) {
    for (int64_t bucket : {int64_t{777}, int64_t{1} << 20}) {
      expectMatchesSingleRank({.dp = 4, .zero = 0, .overlap = overlap, .bucketElements = bucket});
    }
  }
}

TEST(DataParallelTest, RanksSeeDifferentDataButTheSameLoss) {
  // A wrong split (every rank on micro-batches 0..M-1) would still agree
  // between ranks; it must not agree with the reference.
  auto comm = dpGroup(2);
  const RunResult got = runParallel({.dp = 2}, *comm, 1);
  ASSERT_EQ(got.losses.size(), 1u);
  const RunResult& ref1 = reference(1, 1);
  const RunResult& ref2 = reference(2, 1);
  EXPECT_NEAR(got.losses[0], ref2.losses[0], 1e-5 * ref2.losses[0]);
  EXPECT_GT(std::fabs(got.losses[0] - ref1.losses[0]), 1e-4);
}

}  // namespace
}  // namespace bubblescope::engine::testing
