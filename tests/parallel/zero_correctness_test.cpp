// The engine's correctness rule (docs/design.md) for ZeRO 1, 2 and 3 with dp 2 and dp 4.
#include "parallel_fixture.h"

namespace bubblescope::engine::testing {
namespace {

constexpr int kSteps = 5;

class ZeroCorrectnessTest : public ::testing::TestWithParam<int32_t> {};

TEST_P(ZeroCorrectnessTest, MatchesSingleRank) {
  const int32_t stage = GetParam();
  for (int32_t dp : {2, 4}) {
    // Buckets of 3000 elements split layers and parameters across shards.
    const DpCase c{.dp = dp, .zero = stage, .overlap = true, .bucketElements = 3000};
    auto comm = dpGroup(dp);
    const RunResult got = runParallel(c, *comm, kSteps);
    expectAgreement(got, reference(dp, kSteps), describe(c));
  }
}

INSTANTIATE_TEST_SUITE_P(Stages, ZeroCorrectnessTest, ::testing::Values(1, 2, 3),
                         [](const auto& info) { return "Zero" + std::to_string(info.param); });

TEST(ZeroCorrectnessTest, Zero2WithoutOverlapMatchesToo) {
  const DpCase c{.dp = 4, .zero = 2, .overlap = false, .bucketElements = 5000};
  auto comm = dpGroup(4);
  expectAgreement(runParallel(c, *comm, kSteps), reference(4, kSteps), describe(c));
}

}  // namespace
}  // namespace bubblescope::engine::testing
