// ZeRO memory with dp 4: bytes per rank of parameters, gradients and AdamW
// state against the fp32 formulas (REFERENCE.md, after Rajbhandari et al.,
// arXiv 1910.02054, Figure 1): 16Ψ, 4Ψ + 4Ψ + 8Ψ/N, 4Ψ + 12Ψ/N, 16Ψ/N.
#include "parallel_fixture.h"

namespace bubblescope::engine::testing {
namespace {

struct Expected {
  double params, grads, optimizer;  // bytes per rank
};

Expected formula(int32_t stage, double psi, double n) {
  switch (stage) {
    case 0:
      return {4 * psi, 4 * psi, 8 * psi};
    case 1:
      return {4 * psi, 4 * psi, 8 * psi / n};
    case 2:
      return {4 * psi, 4 * psi / n, 8 * psi / n};
    default:
      return {4 * psi / n, 4 * psi / n, 8 * psi / n};
  }
}

void expectWithin5Percent(double got, double want, const std::string& what) {
  EXPECT_LE(std::fabs(got - want), 0.05 * want)
      << what << ": " << got << " bytes, formula " << want;
}

class ZeroMemoryTest : public ::testing::TestWithParam<int32_t> {};

TEST_P(ZeroMemoryTest, BytesPerRankFollowTheFormula) {
  const int32_t stage = GetParam();
  auto comm = dpGroup(4);
  ParallelOptions p;
  p.zeroStage = layout::zeroStageFromNumber(stage).value();
  p.bucketElements = 1024;
  auto trainer = std::move(ParallelTrainer::create(perRankOptions(), p, *comm).value());
  ASSERT_TRUE(trainer->step().isOk());
  const MemoryReport m = trainer->memory();
  const double psi = static_cast<double>(trainer->parameterCount());
  const Expected e = formula(stage, psi, 4);
  const std::string tag = "zero " + std::to_string(stage);
  expectWithin5Percent(m.parameters, e.params, tag + " parameters");
  expectWithin5Percent(m.gradients, e.grads, tag + " gradients");
  expectWithin5Percent(m.optimizer, e.optimizer, tag + " optimizer state");
  expectWithin5Percent(m.parameters + m.gradients + m.optimizer, e.params + e.grads + e.optimizer,
                       tag + " model states");
  // Transients (a layer's gathered parameters or gradients, the buckets in
  // flight) stay below the replicated size at stages 2 and 3.
  if (stage >= 2) {
    EXPECT_LT(m.peakGradients, 4 * psi) << tag;
  }
  if (stage == 3) {
    EXPECT_LT(m.peakParameters, 4 * psi) << tag;
  }
  EXPECT_GT(m.activations, 0);
  if (worldRank() == 0) {
    std::printf(
        "[ memory    ] zero %d dp 4, psi %.0f: params %lld (peak %lld), grads %lld (peak %lld), "
        "optimizer %lld bytes; formula %.0f + %.0f + %.0f\n",
        stage, psi, static_cast<long long>(m.parameters), static_cast<long long>(m.peakParameters),
        static_cast<long long>(m.gradients), static_cast<long long>(m.peakGradients),
        static_cast<long long>(m.optimizer), e.params, e.grads, e.optimizer);
  }
}

INSTANTIATE_TEST_SUITE_P(Stages, ZeroMemoryTest, ::testing::Values(0, 1, 2, 3),
                         [](const auto& info) { return "Zero" + std::to_string(info.param); });

}  // namespace
}  // namespace bubblescope::engine::testing
