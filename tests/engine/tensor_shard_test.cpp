// Tensor-parallel slices: the index arithmetic of tensor_shard.h, and a
// model built for tp rank r of P holding exactly its slices of the
// single-rank model's initial weights (docs/design.md: initialise in full shape
// from one seed, then slice), with the QKV rows of its own heads.
#include "engine/tensor_shard.h"

#include <gtest/gtest.h>

#include <map>
#include <numeric>

#include "engine/gpt_model.h"

namespace bubblescope::engine {
namespace {

// A group that only answers rank and size (construction and initialisation
// need no communication).
class FixedGroup final : public TensorParallelGroup {
 public:
  FixedGroup(int32_t rank, int32_t size) : rank_(rank), size_(size) {}
  int32_t rank() const override { return rank_; }
  int32_t size() const override { return size_; }
  Status allReduce(std::span<float>, const char*, const TraceContext&) override {
    return Status::internal("no communication here");
  }
  Status allReduce(std::span<double>, const char*, const TraceContext&) override {
    return Status::internal("no communication here");
  }

 private:
  int32_t rank_, size_;
};

TEST(TensorShardTest, QkvRowsAreTheRanksPiecesOfQKAndV) {
  // Full (6, 2): rows q0 q1 k0 k1 v0 v1; rank 1 of 2 holds q1 k1 v1.
  std::vector<float> full(12);
  std::iota(full.begin(), full.end(), 0.0f);
  const TensorShard s{.dim = 0, .parts = 3, .rank = 1, .size = 2};
  EXPECT_EQ(shardShape({6, 2}, s), (Shape{3, 2}));
  std::vector<float> local(6);
  copyShardFromFull(full.data(), {6, 2}, s, local.data());
  EXPECT_EQ(local, (std::vector<float>{2, 3, 6, 7, 10, 11}));
}

TEST(TensorShardTest, UnshardedQkvIsTheWholeTensor) {
  // tp 1 (or dim -1) with parts 3: every element in order, no division by a zero piece.
  std::vector<float> full(12);
  std::iota(full.begin(), full.end(), 0.0f);
  for (const TensorShard s : {TensorShard{.dim = 0, .parts = 3, .rank = 0, .size = 1},
                              TensorShard{.dim = -1, .parts = 3, .rank = 0, .size = 2}}) {
    EXPECT_EQ(shardShape({6, 2}, s), (Shape{6, 2}));
    std::vector<float> local(12, -1.0f);
    copyShardFromFull(full.data(), {6, 2}, s, local.data());
    EXPECT_EQ(local, full);
  }
}

TEST(TensorShardTest, ColumnsAndRoundTrip) {
  std::vector<float> full(12);
  std::iota(full.begin(), full.end(), 0.0f);  // (3, 4)
  std::vector<float> back(12, -1.0f);
  for (int32_t r = 0; r < 2; ++r) {
    const TensorShard s{.dim = 1, .parts = 1, .rank = r, .size = 2};
    EXPECT_EQ(shardShape({3, 4}, s), (Shape{3, 2}));
    std::vector<float> local(6);
    copyShardFromFull(full.data(), {3, 4}, s, local.data());
    if (r == 1) {
      EXPECT_EQ(local, (std::vector<float>{2, 3, 6, 7, 10, 11}));
    }
    copyShardIntoFull(local.data(), {3, 4}, s, back.data());
  }
  EXPECT_EQ(back, full);
}

TEST(TensorShardTest, ShardedModelHoldsSlicesOfTheFullModelsWeights) {
  const layout::ModelConfig config = layout::modelPreset("tiny").value();
  Allocator allocator;
  auto full = std::move(GptModel::create(config, &allocator).value());
  full->initialize(7);
  for (int32_t size : {2, 4}) {
    std::map<std::string, std::vector<float>> assembled;
    for (int32_t rank = 0; rank < size; ++rank) {
      FixedGroup group(rank, size);
      auto model = std::move(GptModel::create(config, &allocator, {}, &group).value());
      model->initialize(7);
      int sharded = 0;
      for (Parameter* p : model->parameters()) {
        Parameter* f = full->findParameter(p->name);
        ASSERT_NE(f, nullptr) << p->name;
        EXPECT_EQ(p->fullShape, f->value.shape()) << p->name;
        if (!p->shard.sharded()) {
          EXPECT_EQ(p->value.shape(), f->value.shape()) << p->name;
          EXPECT_TRUE(
              std::equal(f->value.span().begin(), f->value.span().end(), p->value.span().begin()))
              << p->name;
          continue;
        }
        ++sharded;
        EXPECT_EQ(p->value.numel() * size, f->value.numel()) << p->name;
        auto& a = assembled[p->name];
        a.resize(static_cast<size_t>(f->value.numel()), 0.0f);
        copyShardIntoFull(p->value.data(), p->fullShape, p->shard, a.data());
      }
      EXPECT_EQ(sharded, 6 * config.numLayers);  // qkv w/b, proj w, fc w/b, mlp proj w
      // Rank r's first Q, K and V rows are rows r·C/P, C + r·C/P, 2C + r·C/P.
      Parameter* qkv = model->findParameter("h.0.attn.qkv.weight");
      Parameter* fq = full->findParameter("h.0.attn.qkv.weight");
      const int64_t c = config.hidden, cl = c / size;
      for (int part = 0; part < 3; ++part) {
        EXPECT_EQ(qkv->value.data()[part * cl * c], fq->value.data()[(part * c + rank * cl) * c])
            << "part " << part << " rank " << rank;
      }
    }
    for (const auto& [name, values] : assembled) {
      Parameter* f = full->findParameter(name);
      EXPECT_TRUE(std::equal(values.begin(), values.end(), f->value.span().begin()))
          << name << " tp " << size;
    }
  }
}

TEST(TensorShardTest, TpMustDivideHeadsAndMlp) {
  const layout::ModelConfig config = layout::modelPreset("tiny").value();  // 4 heads
  Allocator allocator;
  FixedGroup group(0, 3);
  auto refused = GptModel::create(config, &allocator, {}, &group);
  ASSERT_FALSE(refused.isOk());
  EXPECT_EQ(refused.status().message(), "tp 3 must divide the 4 heads and the MLP size 128");
}

TEST(TensorShardTest, FlopsSplitOverTp) {
  const layout::ModelConfig config = layout::modelPreset("tiny").value();
  Allocator allocator;
  FixedGroup group(1, 2);
  auto full = std::move(GptModel::create(config, &allocator, {1, 3}).value());  // blocks only
  auto half = std::move(GptModel::create(config, &allocator, {1, 3}, &group).value());
  EXPECT_EQ(half->forwardFlops(2, 32) * 2, full->forwardFlops(2, 32));
}

}  // namespace
}  // namespace bubblescope::engine
