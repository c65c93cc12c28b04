// sparseAllReduce on 4 ranks: the sum of every rank's Top-K set, added in
// rank order (so exactly what summing the decoded sets gives), traced as two
// all-gathers of 4 k bytes per rank each.
#include "engine/parallel/sparse_all_reduce.h"

#include <gtest/gtest.h>

#include <random>

#include "engine/parallel/mpi_communicator.h"
#include "engine/parallel/top_k_compressor.h"

namespace bubblescope::engine {
namespace {

using trace_model::EventKind;
using trace_model::ParallelDim;

std::vector<float> gradOf(int rank, int64_t n) {
  std::mt19937 rng(77u + static_cast<uint32_t>(rank));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> g(n);
  for (float& x : g) x = normal(rng);
  return g;
}

TEST(SparseAllReduceTest, SumsEveryRanksTopKSetAndTracesBothGathers) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  auto comm = MpiCommunicator::split(MPI_COMM_WORLD, 0, rank, ParallelDim::kDp);
  ASSERT_TRUE(comm.isOk());
  const int64_t n = 500;
  TopKCompressor mine(n, 0.1);  // k = 50
  CompressedGrad packed;
  ASSERT_TRUE(mine.compress(gradOf(rank, n), packed).isOk());
  tracer::Recorder recorder(rank, true);
  (*comm)->setRecorder(&recorder);
  std::vector<float> sum(n, -1.0f);
  ASSERT_TRUE(sparseAllReduce(**comm, packed, sum).isOk());
  (*comm)->setRecorder(nullptr);

  // Every rank's set, decoded and added in rank order.
  std::vector<float> expected(n, 0.0f), decoded(n);
  int64_t overlap = 0;
  for (int r = 0; r < size; ++r) {
    TopKCompressor theirs(n, 0.1);
    CompressedGrad p;
    ASSERT_TRUE(theirs.compress(gradOf(r, n), p).isOk());
    ASSERT_TRUE(theirs.decompress(p, decoded).isOk());
    for (int64_t i = 0; i < n; ++i) {
      overlap += (expected[i] != 0.0f && decoded[i] != 0.0f) ? 1 : 0;
      expected[i] += decoded[i];
    }
  }
  EXPECT_GT(overlap, 0);  // some elements are in several ranks' sets: they add
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(sum[i], expected[i]) << i;

  auto events = recorder.drain();
  std::erase_if(events, [](const trace_model::Event& e) { return e.kind == EventKind::kWait; });
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].name, kSparseIndicesName);
  EXPECT_EQ(events[1].name, kSparseValuesName);
  for (const auto& e : events) {
    EXPECT_EQ(e.kind, EventKind::kAllGather);
    EXPECT_EQ(e.bytes, size * 50 * 4);
  }
}

TEST(SparseAllReduceTest, AMismatchedOutputIsAnError) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  auto comm = MpiCommunicator::split(MPI_COMM_WORLD, 0, rank, ParallelDim::kDp);
  ASSERT_TRUE(comm.isOk());
  CompressedGrad packed;
  packed.elements = 10;
  std::vector<float> sum(9);
  EXPECT_FALSE(sparseAllReduce(**comm, packed, sum).isOk());
}

}  // namespace
}  // namespace bubblescope::engine
