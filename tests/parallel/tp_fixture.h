// Shared by the tensor-parallel MPI suites (tp_correctness_test on 4 ranks,
// tp_3d_test on 8): agreement with the single-rank run after reassembling
// the tp slices, and pipelined runs over an MpiGrid.
#pragma once

#include "engine/parallel/mpi_grid.h"
#include "engine/parallel/rank_trainer.h"
#include "parallel_fixture.h"

namespace bubblescope::engine::testing {

inline constexpr int kSteps = 5;

inline std::unique_ptr<MpiCommunicator> split(int color, int key, trace_model::ParallelDim dim) {
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
  parallel.zeroStage = layout::zeroStageFromNumber(zero).value();
  parallel.bucketElements = 3000;  // buckets that split layers
  PipelineOptions pipeline;
  pipeline.schedule = schedule;
  pipeline.chunks = chunks;
  pipeline.recompute = recompute;
  const TrainerOptions o = options ? *options : perRankOptions();
  auto made = RankTrainer::create(
      o,
      {.parallel = parallel, .pipeline = pipeline, .groups = {&grid.dp(), &grid.pp(), &grid.tp()}});
  ASSERT_TRUE(made.isOk()) << made.status().toString();
  RunResult got;
  ASSERT_TRUE(recordSteps(**made, kSteps, got)) << what;
  auto params = (*made)->parameters();
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
