// The layout keys of issue 19 through the one trainer (MpiGrid::create from
// a Layout, RankTrainer, its ScheduleExecutor), as `run` builds them: dp 4
// with all_reduce hierarchical in emulated nodes of 2, in the hosts' nodes
// (one machine: one node), and the flat all-reduce behind an emulated
// inter-node link, each trains like the flat run and the single rank
// (docs/design.md, the correctness rule: the sums differ only by fp32 reassociation).
#include <map>

#include "engine/layout/layout.h"
#include "engine/parallel/hierarchical_all_reduce.h"
#include "engine/parallel/mpi_grid.h"
#include "engine/parallel/node_groups.h"
#include "parallel_fixture.h"

namespace bubblescope::engine::testing {
namespace {

constexpr int kSteps = 5;

layout::Layout dp4Layout() {
  layout::Layout l;
  l.dp = 4;
  l.microBatches = 2;
  l.microBatchSize = 2;
  l.bucketElements = 777;  // buckets that split layers
  return l;
}

struct GridRun {
  RunResult result;
  std::map<std::string, int64_t> bytesByName;  // this rank's dp spans
  int32_t nodes = 0, ranksPerNode = 0;
};

// Trains `layout` on the whole world through MpiGrid and RankTrainer, as
// `train --layout` does (cli/train_layout.cpp makeTrainer).
GridRun runThroughGrid(const layout::Layout& l) {
  GridRun run;
  EXPECT_TRUE(layout::validate(l, 4).isOk()) << layout::validate(l, 4).message();
  auto grid = MpiGrid::create(MPI_COMM_WORLD, l);
  EXPECT_TRUE(grid.isOk()) << grid.status().toString();
  if (!grid.isOk()) return run;
  MpiGrid& g = **grid;
  run.nodes = g.dpNodes();
  run.ranksPerNode = g.dpRanksPerNode();
  ParallelOptions p;
  p.bucketElements = *l.bucketElements;
  RankGroups groups{.dp = &g.dp(), .dpIntraNode = g.dpIntraNode(), .dpInterNode = g.dpInterNode()};
  auto made = RankTrainer::create(perRankOptions(), {.parallel = p, .groups = groups});
  EXPECT_TRUE(made.isOk()) << made.status().toString();
  if (!made.isOk()) return run;
  tracer::Recorder recorder(worldRank(), /*enabled=*/true);
  (*made)->setRecorder(&recorder);
  g.setRecorder(&recorder);
  const bool ok = recordSteps(**made, kSteps, run.result, &(*made)->model());
  (*made)->setRecorder(nullptr);
  g.setRecorder(nullptr);
  for (const trace_model::Event& e : recorder.drain()) {
    if (e.dim == trace_model::ParallelDim::kDp) run.bytesByName[e.name] += e.bytes;
  }
  if (!ok) return run;
  auto params = (*made)->parameters();
  EXPECT_TRUE(params.isOk());
  if (params.isOk()) run.result.params = std::move(params).value();
  return run;
}

// Per step, the loss within the correctness rule's 1e-5 relative of the
// flat run's; step 0's bit for bit (no reduction precedes its loss).
void expectLossesMatch(const RunResult& got, const RunResult& flat, const std::string& what) {
  ASSERT_EQ(got.losses.size(), flat.losses.size()) << what;
  EXPECT_EQ(got.losses[0], flat.losses[0]) << what;
  for (size_t s = 0; s < got.losses.size(); ++s) {
    EXPECT_LE(std::fabs(got.losses[s] - flat.losses[s]),
              kLossRelTolerance * std::fabs(flat.losses[s]))
        << what << " step " << s;
  }
}

const GridRun& flatRun() {
  static const GridRun run = runThroughGrid(dp4Layout());
  return run;
}

TEST(HierarchicalRunTest, Dp4InEmulatedNodesOfTwoTrainsLikeFlatAndTracesItsPhases) {
  layout::Layout l = dp4Layout();
  l.allReduce = layout::AllReduceAlgorithm::kHierarchical;
  l.ranksPerNode = 2;
  const GridRun hier = runThroughGrid(l);
  EXPECT_EQ(hier.nodes, 2);
  EXPECT_EQ(hier.ranksPerNode, 2);
  expectLossesMatch(hier.result, flatRun().result, "hierarchical K 2");
  expectAgreement(hier.result, reference(4, kSteps), "hierarchical K 2 vs single rank");
  // Every bucket went through the three phases, and no flat gradient all-reduce ran.
  EXPECT_GT(hier.bytesByName.count(kIntraReduceScatterName), 0u);
  EXPECT_GT(hier.bytesByName.count(kInterAllReduceName), 0u);
  EXPECT_GT(hier.bytesByName.count(kIntraAllGatherName), 0u);
  EXPECT_EQ(hier.bytesByName.count("grad_all_reduce"), 0u);
  EXPECT_GT(flatRun().bytesByName.count("grad_all_reduce"), 0u);
  // The intra-node phases move whole buckets, the inter-node one about half.
  const double inter = static_cast<double>(hier.bytesByName.at(kInterAllReduceName));
  const double intra = static_cast<double>(hier.bytesByName.at(kIntraReduceScatterName));
  EXPECT_NEAR(inter / intra, 0.5, 0.01);
}

TEST(HierarchicalRunTest, NodesFromTheHostsOnOneMachineAreOneNodeAndTrainLikeFlat) {
  layout::Layout l = dp4Layout();
  l.allReduce = layout::AllReduceAlgorithm::kHierarchical;  // ranks_per_node 0: the hosts
  const GridRun hier = runThroughGrid(l);
  EXPECT_EQ(hier.nodes, 1);  // the 4 ranks share this machine's memory
  EXPECT_EQ(hier.ranksPerNode, 4);
  expectLossesMatch(hier.result, flatRun().result, "hierarchical, hosts' nodes");
}

TEST(HierarchicalRunTest, FlatBehindAnEmulatedLinkTrainsLikeFlat) {
  layout::Layout l = dp4Layout();
  l.ranksPerNode = 2;
  l.interNodeGbps = 10.0;
  l.interNodeLatencyUs = 20.0;
  const GridRun paced = runThroughGrid(l);
  EXPECT_EQ(paced.nodes, 2);
  expectLossesMatch(paced.result, flatRun().result, "flat, emulated link");
  expectAgreement(paced.result, reference(4, kSteps), "flat, emulated link vs single rank");
}

TEST(HierarchicalRunTest, NodesWithUnequalRanksAreRefused) {
  auto dp = dpGroup(4);
  const int32_t id = dp->rank() == 3 ? 1 : 0;  // nodes of 3 and 1
  auto nodes = splitByNodeId(dp->comm(), id, trace_model::ParallelDim::kDp);
  ASSERT_FALSE(nodes.isOk());
  EXPECT_EQ(nodes.status().message(),
            "the nodes hold different numbers of the group's ranks (from 1 to 3 of 4): a "
            "hierarchical all-reduce needs the same number on every node");
  auto grid = MpiGrid::create(MPI_COMM_WORLD, 4, 1, 1);
  ASSERT_TRUE(grid.isOk());
  const Status s = (*grid)->splitDpIntoNodes(MPI_COMM_WORLD, {.ranksPerNode = 3});
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("ranks per node 3 must divide the world's 4 ranks"), std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace bubblescope::engine::testing
