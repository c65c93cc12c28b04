// measureCodecCost: the engine's compressed reductions over a mirror group,
// their bytes ratio as the reductions count it, and its refusals.
#include "engine/parallel/codec_benchmark.h"

#include <gtest/gtest.h>

#include <cmath>

#include "engine/parallel/mirror_communicator.h"

namespace bubblescope::engine {
namespace {

using Shapes = std::vector<std::pair<int64_t, int64_t>>;

layout::GradCompressionSpec spec(const char* text) {
  return layout::parseGradCompression(text).value();
}

TEST(CodecBenchmark, TheRatioIsThePlainAllReducesBusBytesOverTheReductionsOwn) {
  // fp16 / bf16 send 2 bytes an element through the same all-reduce.
  for (const char* text : {"fp16", "bf16"}) {
    auto c = measureCodecCost(spec(text), {{4096, 1}}, 2, 1);
    ASSERT_TRUE(c.isOk()) << c.status().toString();
    EXPECT_EQ(c->ratio, 2.0) << text;
    EXPECT_EQ(c->elements, 4096);
  }
  // int8: 4 blocks of 1024 codes and a 4-byte scale for 4096 fp32 values.
  auto int8 = measureCodecCost(spec("int8"), {{64, 64}}, 2, 1);
  ASSERT_TRUE(int8.isOk());
  EXPECT_DOUBLE_EQ(int8->ratio, 4.0 * 4096 / (4 * 1028));
  // topk:0.25 of 1000 over 2 ranks: two all-gathers of 2 x 250 four-byte
  // indices and values, each (p-1)/p of its buffer, against 2 (p-1)/p 4n.
  auto topk = measureCodecCost(spec("topk:0.25"), {{1000, 1}}, 2, 1);
  ASSERT_TRUE(topk.isOk());
  EXPECT_DOUBLE_EQ(topk->ratio, (4.0 * 1000) / (2 * 250 * 4));
  // PowerSGD rank 2 of one 64 x 64 matrix: P (64 x 2) and Q (64 x 2).
  auto powerSgd = measureCodecCost(spec("powersgd:2"), {{64, 64}}, 2, 1);
  ASSERT_TRUE(powerSgd.isOk());
  EXPECT_DOUBLE_EQ(powerSgd->ratio, 4096.0 / 256);
}

TEST(CodecBenchmark, TheCodecIsWhatTheReductionCostsBeyondItsShareOfThePlainOne) {
  for (const char* text : {"fp16", "int8", "topk:0.1", "powersgd:1"}) {
    auto c = measureCodecCost(spec(text), {{256, 128}, {128, 1}}, 2, 3);
    ASSERT_TRUE(c.isOk()) << text << ": " << c.status().toString();
    EXPECT_EQ(c->repetitions, 3);
    EXPECT_EQ(c->elements, 256 * 128 + 128);
    for (double v : {c->compressedWallNs, c->compressedCpuNs, c->plainWallNs, c->plainCpuNs}) {
      EXPECT_TRUE(std::isfinite(v) && v >= 0) << text << " " << v;
    }
    const double n = static_cast<double>(c->elements);
    EXPECT_DOUBLE_EQ(c->wallNsPerElement,
                     std::max(0.0, c->compressedWallNs - c->plainWallNs / c->ratio) / n);
    EXPECT_DOUBLE_EQ(c->cpuNsPerElement,
                     std::max(0.0, c->compressedCpuNs - c->plainCpuNs / c->ratio) / n);
    // The part inside the collectives, by the same formula, at most the codec.
    EXPECT_TRUE(std::isfinite(c->inCollectivesWallNs) && c->inCollectivesWallNs >= 0) << text;
    EXPECT_DOUBLE_EQ(c->reduceWallNsPerElement,
                     std::min(c->wallNsPerElement,
                              std::max(0.0, c->inCollectivesWallNs - c->plainWallNs / c->ratio) / n));
    EXPECT_DOUBLE_EQ(c->reduceCpuNsPerElement,
                     std::min(c->cpuNsPerElement,
                              std::max(0.0, c->inCollectivesCpuNs - c->plainCpuNs / c->ratio) / n));
  }
}

TEST(CodecBenchmark, RefusesWhatItCannotMeasureByName) {
  auto none = measureCodecCost(spec("none"), {{10, 1}}, 2, 1);
  ASSERT_FALSE(none.isOk());
  EXPECT_NE(none.status().message().find("none"), std::string::npos);
  EXPECT_NE(measureCodecCost(spec("fp16"), {{10, 1}}, 1, 1).status().message().find("2 ranks"),
            std::string::npos);
  EXPECT_NE(measureCodecCost(spec("fp16"), {{10, 1}}, 2, 0).status().message().find("repetitions"),
            std::string::npos);
  EXPECT_NE(measureCodecCost(spec("fp16"), {}, 2, 1).status().message().find("empty"),
            std::string::npos);
  EXPECT_NE(measureCodecCost(spec("fp16"), {{0, 3}}, 2, 1).status().message().find("empty"),
            std::string::npos);
}

TEST(MirrorCommunicator, EveryRankHoldsWhatThisOneHolds) {
  MirrorCommunicator comm(trace_model::ParallelDim::kDp, 3);
  EXPECT_EQ(comm.size(), 3);
  EXPECT_EQ(comm.rank(), 0);
  EXPECT_EQ(comm.inCollectives().wallNs, 0);
  std::vector<float> a = {1.0f, -2.5f, 0.25f};
  ASSERT_TRUE(comm.allReduce(a).isOk());
  std::vector<float> big(1 << 20, 1.0f);  // 4 MiB summed: the clocks tick
  ASSERT_TRUE(comm.allReduce(big).isOk());
  EXPECT_GT(comm.inCollectives().wallNs, 0);
  EXPECT_EQ(big[0], 3.0f);
  EXPECT_EQ(a, (std::vector<float>{3.0f, -7.5f, 0.75f}));
  std::vector<float> gathered(6, -1.0f);
  const std::vector<float> mine = {4.0f, 5.0f};
  ASSERT_TRUE(comm.allGather(mine, gathered, {2, 2, 2}).isOk());
  EXPECT_EQ(gathered, (std::vector<float>{4, 5, 4, 5, 4, 5}));
  std::vector<float> part(2);
  ASSERT_TRUE(comm.reduceScatter(std::vector<float>{1, 2, 3, 4, 5, 6}, part, {2, 2, 2}).isOk());
  EXPECT_EQ(part, (std::vector<float>{3, 6}));
  std::vector<float> data(2);
  const Status send = comm.send(data, 1, 0);
  ASSERT_FALSE(send.isOk());
  EXPECT_NE(send.message().find("no mirror of a send"), std::string::npos) << send.message();
}

}  // namespace
}  // namespace bubblescope::engine
