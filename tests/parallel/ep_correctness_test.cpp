// The engine's correctness rule (docs/design.md) for expert parallelism: an MoE model (4
// experts, top-2, every second block MoE) trained with its experts split
// over ep ranks of the dp group matches the single-rank MoE model on the
// same global batch for 5 steps (loss within 1e-5 relative, gradient norm,
// every gradient and parameter this rank holds), with dropped tokens
// (capacity factor 1) and without (capacity factor 2 = E / top_k: no expert
// can overflow). Cases on the 4-rank world: ep 2 (dp 2 = ep 2, two groups
// side by side), dp 4 × ep 2 at ZeRO 0 and 1 (experts reduced over the
// expert-data-parallel pairs {0, 2} and {1, 3}), dp 2 × ep 2 × pp 2 (1f1b
// and zb-h1). Routing is per micro-batch of B sequences on the rank that
// holds it, as the single process routes each of its M × dp micro-batches,
// so both runs drop the same assignments: the drop counts are compared too.
// The all-to-alls are traced (dimension ep, bytes) and no compute span
// encloses one.
#include <map>
#include <numeric>
#include <tuple>

#include "engine/parallel/mpi_grid.h"
#include "engine/parallel/rank_trainer.h"
#include "parallel_fixture.h"

namespace bubblescope::engine::testing {
namespace {

constexpr int kSteps = 5;
constexpr int32_t kExperts = 4;

TrainerOptions moeOptions(double capacityFactor, int32_t layers = 2) {
  TrainerOptions o = perRankOptions();
  o.model.numLayers = layers;
  o.model.experts = kExperts;
  o.model.topK = 2;
  o.model.capacityFactor = capacityFactor;
  o.model.moeEvery = 2;
  o.microBatches = layers > 2 ? 4 : 2;  // pp: more micro-batches than stages
  return o;
}

// Assignments routed and dropped over a run (summed over blocks, experts, steps).
struct Routing {
  int64_t routed = 0;
  int64_t dropped = 0;
  size_t blocks = 0;  // MoE blocks of the model
};

void addRouting(GptModel& model, Routing& r) {
  const std::vector<MoeBlockStats> stats = model.takeMoeStats();
  r.blocks = stats.size();
  for (const MoeBlockStats& b : stats) {
    r.routed += std::accumulate(b.routed.begin(), b.routed.end(), int64_t{0});
    r.dropped += std::accumulate(b.dropped.begin(), b.dropped.end(), int64_t{0});
  }
}

// Summed over every rank of the world.
Routing worldRouting(Routing mine) {
  int64_t v[2] = {mine.routed, mine.dropped}, sum[2] = {};
  MPI_Allreduce(v, sum, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return {sum[0], sum[1], mine.blocks};
}

struct Reference {
  RunResult run;
  Routing routing;
};

// The single process on M × dp micro-batches; its routing counted once per
// world (rank 0's) so it compares with worldRouting() of `copies` groups.
const Reference& reference(double capacityFactor, int32_t dp, int32_t layers) {
  static std::map<std::tuple<double, int32_t, int32_t>, Reference> cache;
  const auto key = std::make_tuple(capacityFactor, dp, layers);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  Reference ref;
  const TrainerOptions options = moeOptions(capacityFactor, layers);
  auto trainer = std::move(RankTrainer::create(singleRankEquivalent(options, dp)).value());
  for (int s = 0; s < kSteps; ++s) {
    auto step = trainer->step().value();
    ref.run.losses.push_back(step.loss);
    ref.run.gradNorms.push_back(step.gradNorm);
    ref.run.lrSum += options.schedule.at(s);
    recordGradients(trainer->model(), ref.run);
    addRouting(trainer->model(), ref.routing);
  }
  for (Parameter* p : trainer->model().parameters()) {
    ref.run.params.emplace_back(p->name,
                                std::vector<float>(p->value.span().begin(), p->value.span().end()));
  }
  return cache.emplace(key, std::move(ref)).first->second;
}

struct EpCase {
  int32_t dp = 2, ep = 2, pp = 1, zero = 0;
  layout::ScheduleKind schedule = layout::ScheduleKind::kOneFOneB;
  double capacityFactor = 1.0;
};

std::string describe(const EpCase& c) {
  return "dp " + std::to_string(c.dp) + " ep " + std::to_string(c.ep) + " pp " +
         std::to_string(c.pp) + " zero " + std::to_string(c.zero) + " " +
         layout::scheduleKindName(c.schedule) + " capacity " + std::to_string(c.capacityFactor);
}

struct EpRun {
  RunResult run;
  Routing routing;
  std::vector<trace_model::Event> events;  // step 0's spans
};

// Runs the case on `grid` (which this rank's groups come from).
EpRun runEp(const EpCase& c, MpiGrid& grid) {
  EpRun out;
  ParallelOptions parallel;
  parallel.zeroStage = layout::zeroStageFromNumber(c.zero).value();
  parallel.bucketElements = 3000;  // buckets that split layers
  RankSetup setup{.parallel = parallel,
                  .groups = {&grid.dp(), nullptr, nullptr, grid.ep(), grid.expertDp()}};
  if (c.pp > 1) {
    setup.pipeline.schedule = c.schedule;
    setup.groups.pp = &grid.pp();
  }
  auto made = RankTrainer::create(moeOptions(c.capacityFactor, c.pp > 1 ? 4 : 2), std::move(setup));
  EXPECT_TRUE(made.isOk()) << made.status().toString();
  if (!made.isOk()) return out;
  RankTrainer& t = **made;
  tracer::Recorder recorder(worldRank(), true);
  for (int s = 0; s < kSteps; ++s) {
    t.setRecorder(s == 0 ? &recorder : nullptr);
    GptModel* model = c.zero == 0 ? &t.model() : nullptr;
    if (!recordSteps(t, 1, out.run, model)) return out;
    addRouting(t.model(), out.routing);
  }
  out.events = recorder.drain();
  auto params = t.parameters();
  EXPECT_TRUE(params.isOk());
  if (params.isOk()) out.run.params = std::move(params).value();
  return out;
}

// `groups`: how many independent copies of the layout the world runs.
void expectMatches(const EpCase& c, MpiGrid& grid, int32_t groups) {
  const std::string what = describe(c);
  const EpRun got = runEp(c, grid);
  ASSERT_FALSE(got.run.params.empty()) << what;
  const Reference& ref = reference(c.capacityFactor, c.dp, c.pp > 1 ? 4 : 2);
  expectAgreement(got.run, heldSubset(ref.run, got.run), what);
  // The same routing: each group's ranks together route and drop exactly
  // what the single process does.
  const Routing world = worldRouting(got.routing);
  EXPECT_EQ(world.routed, groups * ref.routing.routed) << what;
  EXPECT_EQ(world.dropped, groups * ref.routing.dropped) << what;
  if (c.capacityFactor < 2.0) {
    EXPECT_GT(ref.routing.dropped, 0) << what << ": the case must drop tokens";
  } else {
    EXPECT_EQ(ref.routing.dropped, 0) << what;
  }
  // Traced: per micro-batch and MoE block, 3 forward all-to-alls (counts,
  // dispatch, combine) and 2 backward ones, dimension ep; none inside a
  // compute span of this rank.
  int64_t allToAlls = 0;
  for (const auto& e : got.events) {
    if (e.kind != trace_model::EventKind::kAllToAll) continue;
    ++allToAlls;
    EXPECT_EQ(e.dim, trace_model::ParallelDim::kEp) << what;
    EXPECT_GT(e.bytes, 0) << what << " " << e.name;
    for (const auto& other : got.events) {
      if (trace_model::categoryOf(other.kind) != trace_model::EventCategory::kCompute) continue;
      EXPECT_FALSE(other.startNs < e.startNs && e.endNs < other.endNs)
          << what << ": " << e.name << " inside " << other.name;
    }
  }
  if (got.routing.blocks > 0) {
    EXPECT_GT(allToAlls, 0) << what;
    EXPECT_EQ(allToAlls % 5, 0) << what << ": " << allToAlls << " all-to-alls";
  } else {
    EXPECT_EQ(allToAlls, 0) << what << ": a stage without MoE blocks exchanges nothing";
  }
}

std::unique_ptr<MpiGrid> grid(MPI_Comm world, int32_t dp, int32_t pp, int32_t ep) {
  auto g = MpiGrid::create(world, dp, pp, 1, ep);
  EXPECT_TRUE(g.isOk()) << g.status().toString();
  return g.isOk() ? std::move(g).value() : nullptr;
}

// dp 2 = ep 2: two copies side by side (world ranks {0, 1} and {2, 3}).
TEST(ExpertParallelTest, Ep2MatchesSingleRankWithAndWithoutDrops) {
  const int r = worldRank();
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, r / 2, r, &half);
  {
    auto g = grid(half, 2, 1, 2);
    ASSERT_NE(g, nullptr);
    for (double capacity : {1.0, 2.0}) {
      expectMatches({.dp = 2, .ep = 2, .capacityFactor = capacity}, *g, 2);
    }
  }
  MPI_Comm_free(&half);
}

// dp 4 × ep 2: experts 0-1 on dp ranks 0 and 2, 2-3 on 1 and 3; ZeRO 1
// shards each buffer's optimizer state over its own group.
TEST(ExpertParallelTest, Dp4Ep2MatchesSingleRankAtZero0And1) {
  auto g = grid(MPI_COMM_WORLD, 4, 1, 2);
  ASSERT_NE(g, nullptr);
  for (int32_t zero : {0, 1}) expectMatches({.dp = 4, .ep = 2, .zero = zero}, *g, 1);
}

TEST(ExpertParallelTest, Dp2Ep2Pp2MatchesSingleRank) {
  auto g = grid(MPI_COMM_WORLD, 2, 2, 2);
  ASSERT_NE(g, nullptr);
  for (auto schedule : {layout::ScheduleKind::kOneFOneB, layout::ScheduleKind::kZeroBubbleH1}) {
    expectMatches({.dp = 2, .ep = 2, .pp = 2, .schedule = schedule}, *g, 1);
  }
}

// What is not built is refused, not run: ZeRO 2 and 3 with ep, ep with tp.
TEST(ExpertParallelTest, UnsupportedCombinationsAreRefused) {
  auto g = grid(MPI_COMM_WORLD, 4, 1, 2);
  ASSERT_NE(g, nullptr);
  for (int32_t zero : {2, 3}) {
    ParallelOptions parallel;
    parallel.zeroStage = layout::zeroStageFromNumber(zero).value();
    auto made = RankTrainer::create(
        moeOptions(1.0),
        {.parallel = parallel, .groups = {&g->dp(), nullptr, nullptr, g->ep(), g->expertDp()}});
    ASSERT_FALSE(made.isOk());
    EXPECT_NE(made.status().message().find("ZeRO 0 and 1"), std::string::npos)
        << made.status().message();
  }
  auto made = RankTrainer::create(
      moeOptions(1.0), {.groups = {&g->dp(), nullptr, &g->world(), g->ep(), g->expertDp()}});
  ASSERT_FALSE(made.isOk());
  EXPECT_NE(made.status().message().find("tensor parallelism"), std::string::npos)
      << made.status().message();
}

}  // namespace
}  // namespace bubblescope::engine::testing
