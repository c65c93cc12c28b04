// Shared by the tensor-parallel MPI suites (tp_correctness_test on 4 ranks,
// tp_3d_test on 8): agreement with the single-rank run after reassembling
// the tp slices, and pipelined runs over an MpiGrid.
#pragma once

#include "engine/parallel/mpi_grid.h"
#include "engine/parallel/pipeline_trainer.h"
#include "parallel_fixture.h"

namespace bubblescope::engine::testing {

inline constexpr int kSteps = 5;

// AdamW's first steps move an element by about lr · g / (|g| + eps) whatever
// its gradient's size, so where a gradient is near zero the rounding of the
// tp partial sums (a different summation order than one rank's) shows in a
// few elements at ~1e-5 (measured: dp 2 × tp 2 worst 1.9e-5, in h.1's MLP
// matrices, root mean square 1.3e-7; tp 2 and tp 4 worst 1e-6; dp 2 alone
// 6e-7). The bulk must still agree to 1e-6 (root mean square over every
// element).
inline constexpr double kTpParamAbsTolerance = 5e-5;
inline constexpr double kTpParamRmsTolerance = 1e-6;

inline double paramRms(const RunResult& got, const RunResult& ref) {
  double sum = 0.0;
  int64_t n = 0;
  for (size_t i = 0; i < std::min(got.params.size(), ref.params.size()); ++i) {
    const auto& g = got.params[i].second;
    const auto& f = ref.params[i].second;
    for (size_t k = 0; k < std::min(g.size(), f.size()); ++k, ++n) {
      sum += (static_cast<double>(g[k]) - f[k]) * (static_cast<double>(g[k]) - f[k]);
    }
  }
  double both[2] = {sum, static_cast<double>(n)}, total[2] = {};
  MPI_Allreduce(both, total, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return std::sqrt(total[0] / std::max(1.0, total[1]));
}

inline void expectAgreement(const RunResult& got, const RunResult& ref, const std::string& what) {
  const Agreement a = worstOverRanks(compare(got, ref), what);
  const double rms = paramRms(got, ref);
  if (worldRank() == 0) std::printf("[ agreement ] %-40s params rms %.2e\n", what.c_str(), rms);
  EXPECT_LE(a.lossRel, kLossRelTolerance) << what;
  EXPECT_LE(a.normRel, kLossRelTolerance) << what;
  EXPECT_LE(a.paramAbs, kTpParamAbsTolerance) << what;
  EXPECT_LE(rms, kTpParamRmsTolerance) << what;
}

inline std::unique_ptr<MpiCommunicator> split(int color, int key, tracer::ParallelDim dim) {
  auto c = MpiCommunicator::split(MPI_COMM_WORLD, color, key, dim);
  EXPECT_TRUE(c.isOk()) << c.status().toString();
  return std::move(c).value();
}

// A pipelined run on `grid` (its dp, pp and tp groups) against the
// single-rank run restricted to this stage's parameters. `options` null:
// perRankOptions() (the tiny model); `chunks` > 1 with the interleaved
// schedule.
inline void expectPipelineMatches(layout::ScheduleKind schedule, int32_t dpSize, int32_t zero,
                                  MpiGrid& grid, bool recompute = false,
                                  const TrainerOptions* options = nullptr, int32_t chunks = 1) {
  const std::string what =
      std::string(layout::scheduleKindName(schedule)) + " dp " + std::to_string(dpSize) + " tp " +
      std::to_string(grid.grid().tpSize()) + " pp " + std::to_string(grid.grid().ppSize()) + " v " +
      std::to_string(chunks) + " zero " + std::to_string(zero) + (recompute ? " recompute" : "");
  ParallelOptions parallel;
  parallel.zeroStage = zero;
  parallel.bucketElements = 3000;  // buckets that split layers
  PipelineOptions pipeline;
  pipeline.schedule = schedule;
  pipeline.chunks = chunks;
  pipeline.recompute = recompute;
  const TrainerOptions o = options ? *options : perRankOptions();
  auto made = PipelineTrainer::create(o, parallel, pipeline, grid.dp(), grid.pp(), &grid.tp());
  ASSERT_TRUE(made.isOk()) << made.status().toString();
  RunResult got;
  ASSERT_TRUE(recordSteps(**made, kSteps, got)) << what;
  auto params = (*made)->stageParameters();
  ASSERT_TRUE(params.isOk()) << params.status().toString();
  got.params = std::move(params).value();
  const RunResult full = options ? singleRankRun(o, dpSize, kSteps) : reference(dpSize, kSteps);
  RunResult ref = full;
  ref.params.clear();
  for (const auto& [name, values] : got.params) {
    for (const auto& entry : full.params) {
      if (entry.first == name) ref.params.push_back(entry);
    }
  }
  expectAgreement(got, ref, what);
}

}  // namespace bubblescope::engine::testing
