// The data-parallel formulas of planning/formulas.h against a traced
// step of the engine (issue 13 item 8): the bytes a dp 4 rank moves over the
// dp and zero dimensions equal dataParallelVolumeBytes exactly at every ZeRO
// stage; the bytes it keeps are the ZeRO model states (docs/formulas.md, after
// Rajbhandari et al., arXiv 1910.02054, Figure 1: 16Ψ, 4Ψ + 4Ψ + 8Ψ/N,
// 4Ψ + 12Ψ/N, 16Ψ/N) to one element; each peak lies between what the rank
// keeps and that plus the formula's transient term.
#include "planning/formulas.h"
#include "parallel_fixture.h"

namespace bubblescope::engine::testing {
namespace {

using trace_model::EventKind;
using trace_model::ParallelDim;

struct Case {
  int32_t stage;
  bool overlap;
};

class ZeroFormulaTest : public ::testing::TestWithParam<Case> {};

TEST_P(ZeroFormulaTest, TracedBytesAndPeaksFollowTheFormulas) {
  const Case c = GetParam();
  const TrainerOptions options = perRankOptions();
  layout::Layout l;
  l.model = options.model;
  l.dp = 4;
  l.zeroStage = layout::zeroStageFromNumber(c.stage).value();
  l.microBatches = options.microBatches;
  l.microBatchSize = static_cast<int32_t>(options.batchSize);
  l.overlap = c.overlap;
  l.bucketElements = 3000;
  auto comm = dpGroup(l.dp);
  ParallelOptions p;
  p.zeroStage = l.zeroStage;
  p.overlap = l.overlap;
  p.bucketElements = l.bucketElementCount(sizeof(float));
  auto trainer =
      std::move(RankTrainer::create(options, {.parallel = p, .groups = {.dp = &*comm}}).value());
  tracer::Recorder recorder(worldRank(), true, 1 << 16);
  trainer->setRecorder(&recorder);
  ASSERT_TRUE(trainer->step().isOk());
  trainer->setRecorder(nullptr);
  // Volume as the analysis counts it (docs/analysis.md): an all-reduce twice
  // its payload, everything else its payload.
  int64_t bytes = 0;
  for (const trace_model::Event& e : recorder.drain()) {
    if (e.dim != ParallelDim::kDp && e.dim != ParallelDim::kZero) continue;
    bytes += e.kind == EventKind::kAllReduce ? 2 * e.bytes : e.bytes;
  }
  const double psi = static_cast<double>(trainer->parameterCount());
  const std::string tag = "zero " + std::to_string(c.stage) + (c.overlap ? "" : " no-overlap");
  EXPECT_EQ(static_cast<double>(bytes), layout::dataParallelVolumeBytes(l, psi)) << tag;

  const MemoryReport m = trainer->memory();
  const layout::ModelStateBytes f = layout::zeroModelStateBytes(l, psi);
  // Shards differ from Ψ/N by less than one element.
  auto expectKept = [&](int64_t got, double kept, const char* what) {
    EXPECT_LE(std::fabs(static_cast<double>(got) - kept), layout::kBytesPerElement)
        << tag << " " << what << " kept " << got << ", formula " << kept;
  };
  expectKept(m.parameters, f.parameters, "parameters");
  expectKept(m.gradients, f.gradients, "gradients");
  expectKept(m.optimizer, f.optimizer, "optimizer");
  auto expectPeak = [&](int64_t peak, double kept, double transient, const char* what) {
    EXPECT_GE(static_cast<double>(peak), kept - layout::kBytesPerElement) << tag << " " << what;
    EXPECT_LE(static_cast<double>(peak), kept + transient + layout::kBytesPerElement)
        << tag << " " << what << " peak " << peak << ", formula " << kept << " + transient "
        << transient;
  };
  expectPeak(m.peakParameters, f.parameters, f.transientParameters, "parameters");
  expectPeak(m.peakGradients, f.gradients, f.transientGradients, "gradients");
  expectPeak(m.peakOptimizer, f.optimizer, 0, "optimizer");
  EXPECT_GT(m.activations, 0);
  if (layout::shardsParameters(l.zeroStage)) {
    // The transient is real: a gathered slot sits on top of the shard.
    EXPECT_GT(static_cast<double>(m.peakParameters), f.parameters + layout::kBytesPerElement);
  }
  if (worldRank() == 0) {
    std::printf(
        "[ zero      ] %s dp 4 m %d: dp+zero %lld bytes/step (formula %.0f); peaks params %lld "
        "(%.0f + %.0f), grads %lld (%.0f + %.0f)\n",
        tag.c_str(), l.microBatches, static_cast<long long>(bytes),
        layout::dataParallelVolumeBytes(l, psi), static_cast<long long>(m.peakParameters),
        f.parameters, f.transientParameters, static_cast<long long>(m.peakGradients), f.gradients,
        f.transientGradients);
  }
}

INSTANTIATE_TEST_SUITE_P(Stages, ZeroFormulaTest,
                         ::testing::Values(Case{0, true}, Case{1, true}, Case{2, true},
                                           Case{3, true}, Case{2, false}, Case{3, false}),
                         [](const auto& info) {
                           return "Zero" + std::to_string(info.param.stage) +
                                  (info.param.overlap ? "" : "NoOverlap");
                         });

}  // namespace
}  // namespace bubblescope::engine::testing
