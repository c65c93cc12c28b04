// HierarchicalAllReduce on 4 ranks cut into nodes of K: the same sum as a
// flat all-reduce up to fp32 reassociation, identical on every rank, traced
// as its three phases; a K that does not divide the group is an error.
#include "engine/parallel/hierarchical_all_reduce.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "engine/parallel/node_groups.h"

namespace bubblescope::engine {
namespace {

using trace_model::EventKind;
using trace_model::ParallelDim;

// Mixed signs and magnitudes over 2^-10 .. 2^10, so sums cancel and round.
std::vector<float> rankData(int rank, int64_t n) {
  std::mt19937 rng(1234u + static_cast<uint32_t>(rank));
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-10, 10);
  std::vector<float> v(n);
  for (float& x : v) x = std::ldexp(mantissa(rng), exponent(rng));
  return v;
}

void expectEqualsFlat(int32_t ranksPerNode, int64_t n) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  auto nodes = splitIntoNodes(MPI_COMM_WORLD, ranksPerNode, ParallelDim::kDp);
  ASSERT_TRUE(nodes.isOk()) << nodes.status().toString();
  ASSERT_EQ(nodes->intraNode->size(), ranksPerNode);
  ASSERT_EQ(nodes->interNode->size(), size / ranksPerNode);
  auto world = MpiCommunicator::split(MPI_COMM_WORLD, 0, rank, ParallelDim::kDp);
  ASSERT_TRUE(world.isOk());

  const std::vector<float> mine = rankData(rank, n);
  std::vector<float> hier = mine, flat = mine;
  HierarchicalAllReduce reduce(*nodes->intraNode, *nodes->interNode);
  ASSERT_TRUE(reduce.allReduce(hier).isOk());
  ASSERT_TRUE((*world)->allReduce(flat).isOk());
  std::vector<double> exact(mine.begin(), mine.end()), magnitude(n);
  for (int64_t i = 0; i < n; ++i) magnitude[i] = std::fabs(mine[i]);
  ASSERT_TRUE((*world)->allReduce(std::span<double>(exact)).isOk());
  ASSERT_TRUE((*world)->allReduce(std::span<double>(magnitude)).isOk());

  // A sum of N fp32 values in any order is within gamma_{N-1} sum|x| of the
  // exact sum (Higham, Accuracy and Stability, 4.2), so two orders are
  // within twice that of each other. The double sums are exact to 2^-50.
  const double u = 0x1p-24;
  const double gamma = (size - 1) * u / (1 - (size - 1) * u);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_FALSE(std::isnan(hier[i]));
    ASSERT_LE(std::fabs(hier[i] - exact[i]), gamma * magnitude[i])
        << "K " << ranksPerNode << " i " << i;
    ASSERT_LE(std::fabs(double(hier[i]) - flat[i]), 2 * gamma * magnitude[i]) << i;
  }
  // Every rank holds the same bits: the max and min over ranks agree.
  std::vector<float> high = hier, low = hier;
  MPI_Allreduce(MPI_IN_PLACE, high.data(), static_cast<int>(n), MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, low.data(), static_cast<int>(n), MPI_FLOAT, MPI_MIN, MPI_COMM_WORLD);
  EXPECT_EQ(high, low);
}

TEST(HierarchicalAllReduceTest, EqualsFlatWithinReassociationWithTwoRanksPerNode) {
  for (int64_t n : {1, 7, 1001}) expectEqualsFlat(2, n);
}

TEST(HierarchicalAllReduceTest, OneNodeAndOneRankPerNodeAreFlat) {
  expectEqualsFlat(4, 513);  // inter-node group of one
  expectEqualsFlat(1, 513);  // intra-node groups of one
}

TEST(HierarchicalAllReduceTest, TracedAsItsPhasesWithTheBytesEachSends) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  auto nodes = splitIntoNodes(MPI_COMM_WORLD, 2, ParallelDim::kDp);
  ASSERT_TRUE(nodes.isOk());
  tracer::Recorder recorder(rank, true);
  nodes->intraNode->setRecorder(&recorder);
  nodes->interNode->setRecorder(&recorder);
  std::vector<float> data(101, 1.0f);
  CommTrace trace;
  trace.step = 5;
  HierarchicalAllReduce reduce(*nodes->intraNode, *nodes->interNode);
  ASSERT_TRUE(reduce.allReduce(data, trace).isOk());
  nodes->intraNode->setRecorder(nullptr);
  nodes->interNode->setRecorder(nullptr);
  for (float x : data) ASSERT_EQ(x, 4.0f);
  auto events = recorder.drain();
  std::erase_if(events, [](const trace_model::Event& e) { return e.kind == EventKind::kWait; });
  ASSERT_EQ(events.size(), 3u);
  const int64_t shard = rank % 2 == 0 ? 51 : 50;  // evenCounts(101, 2)
  EXPECT_EQ(events[0].name, kIntraReduceScatterName);
  EXPECT_EQ(events[0].kind, EventKind::kReduceScatter);
  EXPECT_EQ(events[0].bytes, 101 * 4);
  EXPECT_EQ(events[1].name, kInterAllReduceName);
  EXPECT_EQ(events[1].kind, EventKind::kAllReduce);
  EXPECT_EQ(events[1].bytes, shard * 4);  // only the shard crosses nodes
  EXPECT_EQ(events[2].name, kIntraAllGatherName);
  EXPECT_EQ(events[2].kind, EventKind::kAllGather);
  EXPECT_EQ(events[2].bytes, 101 * 4);
  for (const auto& e : events) EXPECT_EQ(e.step, 5);
}

TEST(HierarchicalAllReduceTest, RanksPerNodeMustDivideTheGroup) {
  auto nodes = splitIntoNodes(MPI_COMM_WORLD, 3, ParallelDim::kDp);
  ASSERT_FALSE(nodes.isOk());
  EXPECT_NE(nodes.status().toString().find("ranks per node 3 does not divide the group's 4 ranks"),
            std::string::npos)
      << nodes.status().toString();
  EXPECT_FALSE(splitIntoNodes(MPI_COMM_WORLD, 0, ParallelDim::kDp).isOk());
}

}  // namespace
}  // namespace bubblescope::engine
