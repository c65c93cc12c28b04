// MirrorCommunicator against a real group: when every rank of MPI's world
// holds the same gradients, the engine's compressed reductions end with the
// same sums over the mirror as over MPI, bit for bit. The values are
// multiples of 1/8 small enough that every partial sum is exact in each
// reduced type (fp16: 11 significant bits, bf16: 8, int8 blocks whose scale
// is a power of two), so the order of additions, which differs between
// MPI's algorithm and the mirror's, cannot change a bit.
#include "engine/parallel/mirror_communicator.h"

#include <gtest/gtest.h>

#include "engine/parallel/bucket_reduction.h"
#include "engine/parallel/mpi_communicator.h"

namespace bubblescope::engine {
namespace {

// n values c / 8, c in [-limit, limit], with c = limit first in every
// 1024-element chunk (an int8 chunk's scale, max |v| / 127, is then exactly
// 1/8 at limit 127, and the codes are the c).
std::vector<float> eighths(int64_t n, int32_t limit) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int32_t c =
        i % 1024 == 0 ? limit : static_cast<int32_t>((i * 37) % (2 * limit + 1)) - limit;
    v[static_cast<size_t>(i)] = static_cast<float>(c) / 8.0f;
  }
  return v;
}

TEST(MirrorCommunicatorTest, CompressedReductionsSumAsARealGroupOfTheSameData) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  auto world = MpiCommunicator::split(MPI_COMM_WORLD, 0, rank, trace_model::ParallelDim::kDp);
  ASSERT_TRUE(world.isOk()) << world.status().toString();
  MirrorCommunicator mirror(trace_model::ParallelDim::kDp, (*world)->size());
  const int64_t n = 3000;
  // bf16 keeps 8 significant bits: 4 x 31 fits; the others take the full int8 range.
  for (const auto& [text, limit] : std::vector<std::pair<const char*, int32_t>>{
           {"fp16", 127}, {"bf16", 31}, {"int8", 127}, {"topk:0.3", 127}}) {
    const auto spec = layout::parseGradCompression(text).value();
    const std::vector<float> grads = eighths(n, limit);
    auto real = makeBucketReduction(spec, **world, n);
    auto mirrored = makeBucketReduction(spec, mirror, n);
    ASSERT_TRUE(real.isOk() && mirrored.isOk()) << text;
    std::vector<float> realSum(n), mirrorSum(n);
    ASSERT_TRUE((*real)->start(grads, {}).isOk()) << text;
    ASSERT_TRUE((*real)->finish(realSum).isOk()) << text;
    ASSERT_TRUE((*mirrored)->start(grads, {}).isOk()) << text;
    ASSERT_TRUE((*mirrored)->finish(mirrorSum).isOk()) << text;
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(realSum[i], mirrorSum[i]) << text << " element " << i;
    }
    EXPECT_EQ((*real)->busBytes(), (*mirrored)->busBytes()) << text;
    // And the sums are the group's: size x each value (topk: 0 where not kept).
    EXPECT_EQ(mirrorSum[0], static_cast<float>((*world)->size()) * grads[0]) << text;
  }
}

}  // namespace
}  // namespace bubblescope::engine
