// The engine's correctness rule (docs/design.md) for pipeline parallelism: pp 2 and pp 4 with
// gpipe, 1f1b and zb-h1 (split backward), and dp 2 × pp 2, match the
// single-rank run on the same global batch (tiny with 4 layers, so pp 4 has a
// layer per stage); so do pp 2, pp 4 and dp 2 × pp 2 with the interleaved
// schedule at v = 2 (a layer per chunk: at pp 2 stage 0 holds layers 0 and 2,
// stage 1 layers 1 and 3; pp 4 uses 8 layers), and zb-h1 at dp 2 × pp 2 with every ZeRO stage. With
// activation checkpointing (recompute) pp 2 matches too (1f1b and zb-h1), and holds one set of
// activations per stage instead of one per in-flight micro-batch.
#include <algorithm>

#include "engine/parallel/mpi_grid.h"
#include "engine/parallel/rank_trainer.h"
#include "parallel_fixture.h"

namespace bubblescope::engine::testing {
namespace {

using layout::ScheduleKind;

constexpr int kSteps = 5;

// 4 micro-batches per dp rank: more than p, so every schedule's steady
// state runs; 4 layers so pp 4 splits, more when p · v chunks need them.
int32_t layersFor(int32_t p, int32_t chunks) {
  return std::max(4, p * chunks);
}

TrainerOptions pipelineOptions(int32_t layers = 4) {
  TrainerOptions o = perRankOptions();
  o.model.numLayers = layers;
  o.microBatches = 4;
  return o;
}

// The single-rank run on M × dp micro-batches, with every parameter by name.
const RunResult& pipelineReference(int32_t dp, int32_t layers) {
  static std::map<std::pair<int32_t, int32_t>, RunResult> cache;
  auto it = cache.find({dp, layers});
  if (it != cache.end()) return it->second;
  RunResult r = singleRankRun(pipelineOptions(layers), dp, kSteps);
  return cache.emplace(std::make_pair(dp, layers), std::move(r)).first->second;
}

// What a pipeline run used: this rank's peak activation bytes, and the bytes
// of one micro-batch's activations of its chunk 0.
struct ActivationBytes {
  int64_t peak = 0;
  int64_t perMicroBatch = 0;
};

RunResult runPipeline(ScheduleKind kind, int32_t chunks, int32_t zero, Communicator& dp,
                      Communicator& pp, bool recompute = false, ActivationBytes* bytes = nullptr) {
  RunResult r;
  ParallelOptions parallel;
  parallel.zeroStage = layout::zeroStageFromNumber(zero).value();
  parallel.bucketElements = 3000;  // buckets that split layers
  PipelineOptions pipeline;
  pipeline.schedule = kind;
  pipeline.chunks = chunks;
  pipeline.recompute = recompute;
  auto made =
      RankTrainer::create(pipelineOptions(layersFor(pp.size(), chunks)),
                          {.parallel = parallel, .pipeline = pipeline, .groups = {&dp, &pp}});
  EXPECT_TRUE(made.isOk()) << made.status().toString();
  if (!made.isOk() || !recordSteps(**made, kSteps, r)) return r;
  auto params = (*made)->parameters();
  EXPECT_TRUE(params.isOk());
  if (params.isOk()) r.params = std::move(params).value();
  if (bytes != nullptr) {
    const Allocator& allocator = (*made)->allocator();
    bytes->peak = allocator.peakBytes(MemoryCategory::kActivations);
    const int64_t before = allocator.currentBytes(MemoryCategory::kActivations);
    auto one = (*made)->model().newActivations(pipelineOptions().batchSize,
                                               pipelineOptions().model.seqLen);
    EXPECT_TRUE(one.isOk());
    bytes->perMicroBatch = allocator.currentBytes(MemoryCategory::kActivations) - before;
  }
  return r;
}

void expectMatches(ScheduleKind kind, int32_t dpSize, int32_t ppSize, int32_t zero,
                   Communicator& dp, Communicator& pp, int32_t chunks = 1, bool recompute = false,
                   ActivationBytes* bytes = nullptr) {
  const std::string what = std::string(layout::scheduleKindName(kind)) + " v " +
                           std::to_string(chunks) + " dp " + std::to_string(dpSize) + " pp " +
                           std::to_string(ppSize) + " zero " + std::to_string(zero) +
                           (recompute ? " recompute" : "");
  const RunResult got = runPipeline(kind, chunks, zero, dp, pp, recompute, bytes);
  ASSERT_FALSE(got.params.empty()) << what;
  const RunResult ref = heldSubset(pipelineReference(dpSize, layersFor(ppSize, chunks)), got);
  expectAgreement(got, ref, what);
}

std::unique_ptr<MpiCommunicator> split(int color, int key, trace_model::ParallelDim dim) {
  auto c = MpiCommunicator::split(MPI_COMM_WORLD, color, key, dim);
  EXPECT_TRUE(c.isOk()) << c.status().toString();
  return std::move(c).value();
}

TEST(PipelineTest, Pp2MatchesSingleRank) {
  const int r = worldRank();  // two pp 2 pipelines side by side
  auto dp = split(r, 0, trace_model::ParallelDim::kDp);
  auto pp = split(r / 2, r % 2, trace_model::ParallelDim::kPp);
  for (ScheduleKind kind :
       {ScheduleKind::kGPipe, ScheduleKind::kOneFOneB, ScheduleKind::kZeroBubbleH1}) {
    expectMatches(kind, 1, 2, 0, *dp, *pp);
  }
}

TEST(PipelineTest, Pp4MatchesSingleRank) {
  auto dp = split(worldRank(), 0, trace_model::ParallelDim::kDp);
  auto pp = split(0, worldRank(), trace_model::ParallelDim::kPp);
  for (ScheduleKind kind :
       {ScheduleKind::kGPipe, ScheduleKind::kOneFOneB, ScheduleKind::kZeroBubbleH1}) {
    expectMatches(kind, 1, 4, 0, *dp, *pp);
  }
}

// zb-h1's gradients are complete only after each micro-batch's W: the dp
// buckets (all-reduce, or reduce-scatter at ZeRO >= 1) must run there, and
// ZeRO-3 gathers parameters for B (W reads none).
TEST(PipelineTest, ZeroBubbleDp2Pp2MatchesSingleRankAtEveryZeroStage) {
  auto grid = MpiGrid::create(MPI_COMM_WORLD, 2, 2, 1);
  ASSERT_TRUE(grid.isOk()) << grid.status().toString();
  for (int32_t zero : {0, 1, 2, 3}) {
    expectMatches(ScheduleKind::kZeroBubbleH1, 2, 2, zero, (*grid)->dp(), (*grid)->pp());
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
  auto dp = split(r, 0, trace_model::ParallelDim::kDp);
  auto pp = split(r / 2, r % 2, trace_model::ParallelDim::kPp);
  expectMatches(ScheduleKind::kInterleaved, 1, 2, 0, *dp, *pp, 2);
}

// pp 4 × v 2 = 8 chunks: an 8-layer model, one layer per chunk.
TEST(PipelineTest, InterleavedPp4MatchesSingleRank) {
  auto dp = split(worldRank(), 0, trace_model::ParallelDim::kDp);
  auto pp = split(0, worldRank(), trace_model::ParallelDim::kPp);
  expectMatches(ScheduleKind::kInterleaved, 1, 4, 0, *dp, *pp, 2);
}

TEST(PipelineTest, InterleavedDp2Pp2MatchesSingleRank) {
  auto grid = MpiGrid::create(MPI_COMM_WORLD, 2, 2, 1);
  ASSERT_TRUE(grid.isOk()) << grid.status().toString();
  for (int32_t zero : {0, 1}) {
    expectMatches(ScheduleKind::kInterleaved, 2, 2, zero, (*grid)->dp(), (*grid)->pp(), 2);
  }
}

// GPipe runs all M = 4 forwards before the first backward. Without recompute
// each stage then holds M micro-batches' activations A (stage 1 also the M
// received inputs I = B·T·C floats, kept for the backward); with recompute
// one A (reused from the pool) plus the same M inputs. So the peaks are
// exactly M·A + k·I and A + k·I (k = M on stage 1, 0 on stage 0), and their
// ratio (A + k·I) / (M·A + k·I) is at most about 1/M + I/A.
TEST(PipelineTest, RecomputePp2MatchesSingleRankWithFewerActivationBytes) {
  const int r = worldRank();  // two pp 2 pipelines side by side
  auto dp = split(r, 0, trace_model::ParallelDim::kDp);
  auto pp = split(r / 2, r % 2, trace_model::ParallelDim::kPp);
  expectMatches(ScheduleKind::kOneFOneB, 1, 2, 0, *dp, *pp, 1, true);
  expectMatches(ScheduleKind::kZeroBubbleH1, 1, 2, 0, *dp, *pp, 1, true);
  ActivationBytes plain, recomputed;
  expectMatches(ScheduleKind::kGPipe, 1, 2, 0, *dp, *pp, 1, false, &plain);
  expectMatches(ScheduleKind::kGPipe, 1, 2, 0, *dp, *pp, 1, true, &recomputed);
  const TrainerOptions o = pipelineOptions();
  const int64_t m = o.microBatches;
  const int64_t input = o.batchSize * o.model.seqLen * o.model.hidden * 4;
  const int64_t kept = pp->rank() == 1 ? m * input : 0;
  const int64_t a = plain.perMicroBatch;
  EXPECT_EQ(recomputed.perMicroBatch, a);
  EXPECT_EQ(plain.peak, m * a + kept) << "stage " << pp->rank();
  EXPECT_EQ(recomputed.peak, a + kept) << "stage " << pp->rank();
  const double ratio = static_cast<double>(recomputed.peak) / static_cast<double>(plain.peak);
  EXPECT_LE(ratio, 1.0 / m + static_cast<double>(input) / a) << "stage " << pp->rank();
  std::printf("[ memory    ] rank %d stage %d: activations peak %lld -> %lld bytes (ratio %.3f)\n",
              r, pp->rank(), static_cast<long long>(plain.peak),
              static_cast<long long>(recomputed.peak), ratio);
}

// One zb-h1 step with recompute, traced: every micro-batch has one B and one
// W span per stage, each with a span per layer of the stage inside, no fused
// backward, and its recomputed forward shows as kRecompute, per layer too.
TEST(PipelineTest, ZeroBubbleWithRecomputeTracesEveryLayer) {
  const int r = worldRank();  // two pp 2 pipelines side by side
  auto dp = split(r, 0, trace_model::ParallelDim::kDp);
  auto pp = split(r / 2, r % 2, trace_model::ParallelDim::kPp);
  PipelineOptions pipeline;
  pipeline.schedule = ScheduleKind::kZeroBubbleH1;
  pipeline.recompute = true;
  auto made =
      RankTrainer::create(pipelineOptions(), {.pipeline = pipeline, .groups = {&*dp, &*pp}});
  ASSERT_TRUE(made.isOk()) << made.status().toString();
  tracer::Recorder recorder(r, true);
  (*made)->setRecorder(&recorder);
  ASSERT_TRUE((*made)->step().isOk());
  (*made)->setRecorder(nullptr);
  const std::vector<trace_model::Event> events = recorder.drain();
  auto count = [&](trace_model::EventKind kind, const std::string& name) {
    return std::count_if(events.begin(), events.end(), [&](const trace_model::Event& e) {
      return e.kind == kind && (name.empty() || e.name == name);
    });
  };
  using trace_model::EventKind;
  const int64_t m = pipelineOptions().microBatches;
  // The stage's layers (the split is by cost): blocks, and the embedding or the head.
  const GptModel& model = (*made)->model();
  std::vector<std::string> blocks;
  for (int32_t slot = std::max(model.firstSlot(), 1);
       slot < std::min(model.lastSlot(), model.slotCount() - 1); ++slot) {
    blocks.push_back("h." + std::to_string(slot - 1));
  }
  ASSERT_FALSE(blocks.empty());
  const std::string edge = pp->rank() == 0 ? "embedding" : "head";
  EXPECT_EQ(count(EventKind::kBackward, ""), 0);
  EXPECT_EQ(count(EventKind::kBackwardInput, "backward_input"), m);
  EXPECT_EQ(count(EventKind::kBackwardWeight, "backward_weight"), m);
  EXPECT_EQ(count(EventKind::kRecompute, "recompute"), m);
  for (const std::string& layer : blocks) {
    EXPECT_EQ(count(EventKind::kForward, layer), m) << layer;
    EXPECT_EQ(count(EventKind::kRecompute, layer), m) << layer;
    EXPECT_EQ(count(EventKind::kBackwardInput, layer), m) << layer;
    EXPECT_EQ(count(EventKind::kBackwardWeight, layer), m) << layer;
  }
  EXPECT_EQ(count(EventKind::kRecompute, edge), m);
  EXPECT_EQ(count(EventKind::kBackwardWeight, edge), m);
  EXPECT_EQ(count(EventKind::kBackwardInput, edge), pp->rank() == 0 ? 0 : m);  // no B: embedding
  for (const trace_model::Event& e : events) {
    if (e.kind != EventKind::kBackwardInput && e.kind != EventKind::kBackwardWeight) continue;
    EXPECT_EQ(e.stage, pp->rank());
    EXPECT_GE(e.microBatch, 0);
    EXPECT_LT(e.microBatch, m);
    EXPECT_EQ(e.chunk, 0);
  }
}

TEST(PipelineTest, BadChunkCountsAndTooFewLayersAreRefused) {
  auto dp = split(worldRank(), 0, trace_model::ParallelDim::kDp);
  auto pp = split(0, worldRank(), trace_model::ParallelDim::kPp);
  PipelineOptions oneChunk;  // interleaved needs v >= 2
  oneChunk.schedule = ScheduleKind::kInterleaved;
  auto single =
      RankTrainer::create(pipelineOptions(), {.pipeline = oneChunk, .groups = {&*dp, &*pp}});
  ASSERT_FALSE(single.isOk());
  EXPECT_NE(single.status().message().find("interleaved takes 2 to 8"), std::string::npos)
      << single.status().message();
  TrainerOptions twoLayers = perRankOptions();  // tiny: 2 layers for 4 stages
  auto few = RankTrainer::create(twoLayers, {.groups = {&*dp, &*pp}});
  ASSERT_FALSE(few.isOk());
  EXPECT_NE(few.status().message().find("layers"), std::string::npos) << few.status().message();
  PipelineOptions zb;  // zb-h1 needs m >= p: 2 micro-batches for 4 stages
  zb.schedule = ScheduleKind::kZeroBubbleH1;
  TrainerOptions twoMicroBatches = pipelineOptions();
  twoMicroBatches.microBatches = 2;
  auto fewMb = RankTrainer::create(twoMicroBatches, {.pipeline = zb, .groups = {&*dp, &*pp}});
  ASSERT_FALSE(fewMb.isOk());
  EXPECT_NE(fewMb.status().message().find("zb-h1 needs m >= p"), std::string::npos)
      << fewMb.status().message();
}

}  // namespace
}  // namespace bubblescope::engine::testing
