// The engine's correctness rule (docs/design.md) for tensor parallelism: tp 2, tp 4, dp 2 × tp 2
// (ZeRO 0, 1 and 3) and tp 2 × pp 2 (1f1b, zb-h1, 1f1b with recompute, interleaved v 2) match
// the single-rank run on the same global batch (losses, gradient norms, and
// the final parameters after reassembling the tp slices). The replicated
// parameters' gradients are equal on every tp rank, and a traced step holds
// the tp all-reduces: two forward and two backward per block per
// micro-batch (in B under zb-h1), dim tp, B·T·C floats each, outside every
// compute span, and the compute spans carry this rank's share of FLOPs.
#include "tp_fixture.h"

namespace bubblescope::engine::testing {
namespace {

std::unique_ptr<RankTrainer> makeTrainer(int32_t zero, Communicator& dp, Communicator& tp) {
  ParallelOptions p;
  p.zeroStage = layout::zeroStageFromNumber(zero).value();
  p.bucketElements = 3000;  // buckets that split layers
  auto made = RankTrainer::create(perRankOptions(), {.parallel = p, .groups = {&dp, nullptr, &tp}});
  EXPECT_TRUE(made.isOk()) << made.status().toString();
  return made.isOk() ? std::move(made).value() : nullptr;
}

void expectMatches(const std::string& what, int32_t dpSize, int32_t zero, Communicator& dp,
                   Communicator& tp) {
  auto trainer = makeTrainer(zero, dp, tp);
  ASSERT_NE(trainer, nullptr) << what;
  RunResult got;
  ASSERT_TRUE(recordSteps(*trainer, kSteps, got, zero == 0 ? &trainer->model() : nullptr)) << what;
  auto params = trainer->parameters();
  ASSERT_TRUE(params.isOk()) << params.status().toString();
  got.params = std::move(params).value();
  expectAgreement(got, reference(dpSize, kSteps), what);
}

TEST(TensorParallelTest, Tp2MatchesSingleRank) {
  const int r = worldRank();  // two tp 2 groups side by side
  auto dp = split(r, 0, trace_model::ParallelDim::kDp);
  auto tp = split(r / 2, r % 2, trace_model::ParallelDim::kTp);
  expectMatches("tp 2", 1, 0, *dp, *tp);
}

TEST(TensorParallelTest, Tp4MatchesSingleRank) {
  auto dp = split(worldRank(), 0, trace_model::ParallelDim::kDp);
  auto tp = split(0, worldRank(), trace_model::ParallelDim::kTp);
  expectMatches("tp 4 (one head per rank)", 1, 0, *dp, *tp);
}

TEST(TensorParallelTest, Dp2Tp2MatchesSingleRank) {
  auto grid = MpiGrid::create(MPI_COMM_WORLD, 2, 1, 2);
  ASSERT_TRUE(grid.isOk()) << grid.status().toString();
  for (int32_t zero : {0, 1, 3}) {
    expectMatches("dp 2 x tp 2 zero " + std::to_string(zero), 2, zero, (*grid)->dp(),
                  (*grid)->tp());
  }
}

// Layer norms, embeddings, the head and the row-parallel biases are computed
// from replicated tensors: their gradients (and so their values) are
// bit-identical on every tp rank, step after step.
TEST(TensorParallelTest, ReplicatedGradientsAreEqualOverTp) {
  auto dp = split(worldRank(), 0, trace_model::ParallelDim::kDp);
  auto tp = split(0, worldRank(), trace_model::ParallelDim::kTp);
  auto trainer = makeTrainer(0, *dp, *tp);
  ASSERT_NE(trainer, nullptr);
  int replicated = 0;
  for (int s = 0; s < 2; ++s) {
    ASSERT_TRUE(trainer->step().isOk());
    for (Parameter* p : trainer->model().parameters()) {
      if (p->shard.sharded()) continue;
      ++replicated;
      for (Tensor* t : {&p->grad, &p->value}) {
        std::vector<float> first(t->span().begin(), t->span().end());
        ASSERT_TRUE(tp->broadcast(first, 0).isOk());
        EXPECT_TRUE(std::equal(first.begin(), first.end(), t->span().begin()))
            << p->name << " differs from tp rank 0 on tp rank " << tp->rank();
      }
    }
  }
  // wte, wpe, per block ln_1 (2), proj bias, ln_2 (2), mlp proj bias, ln_f (2), lm_head.
  EXPECT_EQ(replicated, 2 * (2 + 6 * perRankOptions().model.numLayers + 3));
}

TEST(TensorParallelTest, TracedStepHasTwoForwardAndTwoBackwardTpAllReducesPerBlock) {
  const int r = worldRank();
  auto dp = split(r, 0, trace_model::ParallelDim::kDp);
  auto tp = split(r / 2, r % 2, trace_model::ParallelDim::kTp);
  auto trainer = makeTrainer(0, *dp, *tp);
  ASSERT_NE(trainer, nullptr);
  tracer::Recorder recorder(r, true, 1 << 16);
  trainer->setRecorder(&recorder);
  ASSERT_TRUE(trainer->step().isOk());
  trainer->setRecorder(nullptr);
  const TrainerOptions o = perRankOptions();
  const int64_t bytes = o.batchSize * o.model.seqLen * o.model.hidden * 4;
  std::map<std::string, int> count;
  std::map<std::pair<std::string, int32_t>, int> perMicroBatch;
  const std::vector<trace_model::Event> events = recorder.drain();
  int64_t forwardFlops = 0, backwardFlops = 0;
  for (const trace_model::Event& e : events) {
    if (e.kind == trace_model::EventKind::kForward) forwardFlops += e.flops;
    if (e.kind == trace_model::EventKind::kBackward) backwardFlops += e.flops;
  }
  // This rank's share: the blocks' products halved, the head whole.
  const int64_t perMicroBatchFlops = trainer->model().forwardFlops(o.batchSize, o.model.seqLen);
  EXPECT_EQ(forwardFlops, o.microBatches * perMicroBatchFlops);
  EXPECT_EQ(backwardFlops, 2 * o.microBatches * perMicroBatchFlops);
  for (const trace_model::Event& e : events) {
    if (e.dim != trace_model::ParallelDim::kTp) continue;
    ++count[e.name];
    if (e.name == "grad_norm") continue;
    EXPECT_EQ(e.kind, trace_model::EventKind::kAllReduce) << e.name;
    EXPECT_EQ(e.bytes, bytes) << e.name;
    EXPECT_EQ(e.step, 0) << e.name;
    ++perMicroBatch[{e.name, e.microBatch}];
    // A blocking all-reduce never sits inside a compute span of its rank.
    for (const trace_model::Event& c : events) {
      if (c.lane != trace_model::Lane::kCompute) continue;
      EXPECT_FALSE(c.startNs < e.endNs && e.startNs < c.endNs && c.startNs <= e.startNs &&
                   e.endNs <= c.endNs)
          << c.name << " encloses " << e.name;
    }
  }
  const int perBlock = o.model.numLayers;
  for (const char* name : {"tp_attn_all_reduce", "tp_mlp_all_reduce", "tp_attn_grad_all_reduce",
                           "tp_mlp_grad_all_reduce"}) {
    EXPECT_EQ(count[name], perBlock * o.microBatches) << name;
    for (int32_t mb = 0; mb < o.microBatches; ++mb) {
      EXPECT_EQ((perMicroBatch[{name, mb}]), perBlock) << name << " micro-batch " << mb;
    }
  }
  EXPECT_EQ(count["grad_norm"], 1);
  EXPECT_EQ(count.size(), 5u);
}

// zb-h1 under tp: per layer and micro-batch two forward all-reduces and two
// backward ones, in B (between B spans), none inside any compute span.
TEST(TensorParallelTest, TracedZbStepRunsTheBackwardTpAllReducesInB) {
  auto grid = MpiGrid::create(MPI_COMM_WORLD, 1, 2, 2);
  ASSERT_TRUE(grid.isOk()) << grid.status().toString();
  PipelineOptions pipeline;
  pipeline.schedule = layout::ScheduleKind::kZeroBubbleH1;
  auto made = RankTrainer::create(
      perRankOptions(),
      {.pipeline = pipeline, .groups = {&(*grid)->dp(), &(*grid)->pp(), &(*grid)->tp()}});
  ASSERT_TRUE(made.isOk()) << made.status().toString();
  tracer::Recorder recorder(worldRank(), true, 1 << 16);
  (*made)->setRecorder(&recorder);
  ASSERT_TRUE((*made)->step().isOk());
  (*made)->setRecorder(nullptr);
  const std::vector<trace_model::Event> events = recorder.drain();
  const TrainerOptions o = perRankOptions();
  const int layersHere = o.model.numLayers / 2;  // one block per stage
  int forward = 0, backward = 0, bSpans = 0;
  for (const trace_model::Event& e : events) {
    if (e.kind == trace_model::EventKind::kBackwardInput && e.name.rfind("h.", 0) == 0) ++bSpans;
    if (e.dim != trace_model::ParallelDim::kTp || e.name == "grad_norm") continue;
    const bool grad = e.name.find("grad") != std::string::npos;
    (grad ? backward : forward) += 1;
    EXPECT_EQ(e.stage, (*grid)->coord().pp) << e.name;
    for (const trace_model::Event& c : events) {
      if (c.lane != trace_model::Lane::kCompute) continue;
      EXPECT_FALSE(c.startNs <= e.startNs && e.endNs <= c.endNs && c.startNs < c.endNs &&
                   e.startNs < e.endNs)
          << c.name << " encloses " << e.name;
    }
    if (!grad) continue;
    // Between this micro-batch's B segments of the block: a B span of the
    // same micro-batch ends at or before it and another starts after it.
    bool before = false, after = false;
    for (const trace_model::Event& c : events) {
      if (c.kind != trace_model::EventKind::kBackwardInput || c.microBatch != e.microBatch)
        continue;
      before = before || c.endNs <= e.startNs;
      after = after || c.startNs >= e.endNs;
    }
    EXPECT_TRUE(before && after) << e.name << " micro-batch " << e.microBatch;
  }
  EXPECT_EQ(forward, 2 * layersHere * o.microBatches);
  EXPECT_EQ(backward, 2 * layersHere * o.microBatches);
  EXPECT_EQ(bSpans, 3 * layersHere * o.microBatches);  // three stretches around two all-reduces
}

TEST(TensorParallelTest, Tp2Pp2MatchesSingleRank) {
  auto grid = MpiGrid::create(MPI_COMM_WORLD, 1, 2, 2);
  ASSERT_TRUE(grid.isOk()) << grid.status().toString();
  using layout::ScheduleKind;
  expectPipelineMatches(ScheduleKind::kOneFOneB, 1, 0, **grid);
  // zb-h1: the backward tp all-reduces run in B, W needs none.
  expectPipelineMatches(ScheduleKind::kZeroBubbleH1, 1, 0, **grid);
  // Recompute re-runs the forward's tp all-reduces before the backward.
  expectPipelineMatches(ScheduleKind::kOneFOneB, 1, 0, **grid, true);
}

// Interleaved 1F1B under tp: 4 layers, so each stage holds v = 2 chunks of
// one layer (the embedding with chunk 0 of stage 0, the head with chunk 1 of
// stage 1), and 4 micro-batches (a multiple of p).
TEST(TensorParallelTest, InterleavedTp2Pp2MatchesSingleRank) {
  auto grid = MpiGrid::create(MPI_COMM_WORLD, 1, 2, 2);
  ASSERT_TRUE(grid.isOk()) << grid.status().toString();
  TrainerOptions o = perRankOptions();
  o.model.numLayers = 4;
  o.microBatches = 4;
  expectPipelineMatches(layout::ScheduleKind::kInterleaved, 1, 0, **grid, false, &o, 2);
}

}  // namespace
}  // namespace bubblescope::engine::testing
