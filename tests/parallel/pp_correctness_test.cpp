// DESIGN.md correctness rule for pipeline parallelism: pp 2 and pp 4 with
// gpipe and 1f1b, and dp 2 × pp 2, match the single-rank run on the same
// global batch (tiny with 4 layers, so pp 4 has a layer per stage); so do
// pp 2 and dp 2 × pp 2 with the interleaved schedule at v = 2 (a layer per
// chunk: stage 0 holds layers 0 and 2, stage 1 layers 1 and 3).
#include "engine/parallel/mpi_grid.h"
#include "engine/parallel/pipeline_trainer.h"
#include "parallel_fixture.h"

namespace bubblescope::engine::testing {
namespace {

using layout::ScheduleKind;

constexpr int kSteps = 5;

// 4 micro-batches per dp rank: more than p, so every schedule's steady
// state runs; 4 layers so pp 4 splits.
TrainerOptions pipelineOptions() {
  TrainerOptions o = perRankOptions();
  o.model.numLayers = 4;
  o.microBatches = 4;
  return o;
}

// The single-rank run on M × dp micro-batches, with every parameter by name.
const RunResult& pipelineReference(int32_t dp) {
  static std::map<int32_t, RunResult> cache;
  auto it = cache.find(dp);
  if (it != cache.end()) return it->second;
  RunResult r;
  auto trainer = std::move(Trainer::create(singleRankEquivalent(pipelineOptions(), dp)).value());
  for (int s = 0; s < kSteps; ++s) {
    auto step = trainer->step().value();
    r.losses.push_back(step.loss);
    r.gradNorms.push_back(step.gradNorm);
  }
  for (Parameter* p : trainer->model().parameters()) {
    r.params.emplace_back(p->name,
                          std::vector<float>(p->value.span().begin(), p->value.span().end()));
  }
  return cache.emplace(dp, std::move(r)).first->second;
}

RunResult runPipeline(ScheduleKind kind, int32_t chunks, int32_t zero, Communicator& dp,
                      Communicator& pp) {
  RunResult r;
  ParallelOptions parallel;
  parallel.zeroStage = zero;
  parallel.bucketElements = 3000;  // buckets that split layers
  PipelineOptions pipeline;
  pipeline.schedule = kind;
  pipeline.chunks = chunks;
  auto made = PipelineTrainer::create(pipelineOptions(), parallel, pipeline, dp, pp);
  EXPECT_TRUE(made.isOk()) << made.status().toString();
  if (!made.isOk()) return r;
  for (int s = 0; s < kSteps; ++s) {
    auto step = (*made)->step();
    EXPECT_TRUE(step.isOk()) << step.status().toString();
    if (!step.isOk()) return r;
    r.losses.push_back(step->loss);
    r.gradNorms.push_back(step->gradNorm);
  }
  auto params = (*made)->stageParameters();
  EXPECT_TRUE(params.isOk());
  if (params.isOk()) r.params = std::move(params).value();
  return r;
}

// The reference restricted to the parameters this stage holds, in its order.
RunResult stageSubset(const RunResult& ref, const RunResult& got) {
  RunResult sub = ref;
  sub.params.clear();
  for (const auto& [name, values] : got.params) {
    for (const auto& entry : ref.params) {
      if (entry.first == name) sub.params.push_back(entry);
    }
  }
  return sub;
}

void expectMatches(ScheduleKind kind, int32_t dpSize, int32_t ppSize, int32_t zero,
                   Communicator& dp, Communicator& pp, int32_t chunks = 1) {
  const std::string what = std::string(layout::scheduleKindName(kind)) + " v " +
                           std::to_string(chunks) + " dp " + std::to_string(dpSize) + " pp " +
                           std::to_string(ppSize) + " zero " + std::to_string(zero);
  const RunResult got = runPipeline(kind, chunks, zero, dp, pp);
  ASSERT_FALSE(got.params.empty()) << what;
  const RunResult ref = stageSubset(pipelineReference(dpSize), got);
  const Agreement a = worstOverRanks(compare(got, ref), what);
  EXPECT_LE(a.lossRel, kLossRelTolerance) << what;
  EXPECT_LE(a.normRel, kLossRelTolerance) << what;
  EXPECT_LE(a.paramAbs, kParamAbsTolerance) << what;
}

std::unique_ptr<MpiCommunicator> split(int color, int key, tracer::ParallelDim dim) {
  auto c = MpiCommunicator::split(MPI_COMM_WORLD, color, key, dim);
  EXPECT_TRUE(c.isOk()) << c.status().toString();
  return std::move(c).value();
}

TEST(PipelineTest, Pp2MatchesSingleRank) {
  const int r = worldRank();  // two pp 2 pipelines side by side
  auto dp = split(r, 0, tracer::ParallelDim::kDp);
  auto pp = split(r / 2, r % 2, tracer::ParallelDim::kPp);
  for (ScheduleKind kind : {ScheduleKind::kGPipe, ScheduleKind::kOneFOneB}) {
    expectMatches(kind, 1, 2, 0, *dp, *pp);
  }
}

TEST(PipelineTest, Pp4MatchesSingleRank) {
  auto dp = split(worldRank(), 0, tracer::ParallelDim::kDp);
  auto pp = split(0, worldRank(), tracer::ParallelDim::kPp);
  for (ScheduleKind kind : {ScheduleKind::kGPipe, ScheduleKind::kOneFOneB}) {
    expectMatches(kind, 1, 4, 0, *dp, *pp);
  }
}

TEST(PipelineTest, Dp2Pp2MatchesSingleRank) {
  auto grid = MpiGrid::create(MPI_COMM_WORLD, 2, 2, 1);
  ASSERT_TRUE(grid.isOk()) << grid.status().toString();
  for (int32_t zero : {0, 1}) {
    expectMatches(ScheduleKind::kOneFOneB, 2, 2, zero, (*grid)->dp(), (*grid)->pp());
  }
  expectMatches(ScheduleKind::kGPipe, 2, 2, 0, (*grid)->dp(), (*grid)->pp());
}

TEST(PipelineTest, InterleavedPp2MatchesSingleRank) {
  const int r = worldRank();  // two pp 2 pipelines side by side, 2 chunks per stage
  auto dp = split(r, 0, tracer::ParallelDim::kDp);
  auto pp = split(r / 2, r % 2, tracer::ParallelDim::kPp);
  expectMatches(ScheduleKind::kInterleaved, 1, 2, 0, *dp, *pp, 2);
}

TEST(PipelineTest, InterleavedDp2Pp2MatchesSingleRank) {
  auto grid = MpiGrid::create(MPI_COMM_WORLD, 2, 2, 1);
  ASSERT_TRUE(grid.isOk()) << grid.status().toString();
  for (int32_t zero : {0, 1}) {
    expectMatches(ScheduleKind::kInterleaved, 2, 2, zero, (*grid)->dp(), (*grid)->pp(), 2);
  }
}

TEST(PipelineTest, UnimplementedSchedulesAndTooFewLayersAreRefused) {
  auto dp = split(worldRank(), 0, tracer::ParallelDim::kDp);
  auto pp = split(0, worldRank(), tracer::ParallelDim::kPp);
  PipelineOptions zb;
  zb.schedule = ScheduleKind::kZeroBubbleH1;
  auto refused = PipelineTrainer::create(pipelineOptions(), {}, zb, *dp, *pp);
  ASSERT_FALSE(refused.isOk());
  EXPECT_NE(refused.status().message().find("zb-h1 is not implemented yet"), std::string::npos)
      << refused.status().message();
  PipelineOptions oneChunk;  // interleaved needs v >= 2
  oneChunk.schedule = ScheduleKind::kInterleaved;
  auto single = PipelineTrainer::create(pipelineOptions(), {}, oneChunk, *dp, *pp);
  ASSERT_FALSE(single.isOk());
  EXPECT_NE(single.status().message().find("interleaved takes 2 to 8"), std::string::npos)
      << single.status().message();
  TrainerOptions twoLayers = perRankOptions();  // tiny: 2 layers for 4 stages
  auto few = PipelineTrainer::create(twoLayers, {}, {}, *dp, *pp);
  ASSERT_FALSE(few.isOk());
  EXPECT_NE(few.status().message().find("layers"), std::string::npos) << few.status().message();
}

}  // namespace
}  // namespace bubblescope::engine::testing
