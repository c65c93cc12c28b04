// The decoder with mixture-of-experts blocks: parameter counts, the whole
// model against finite differences (double), the B/W split, training, and
// the config's checks.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/gpt_model.h"
#include "planning/formulas.h"
#include "engine/parallel/rank_trainer.h"
#include "tests/engine/grad_check.h"
#include "tests/engine/tiny_decoder.h"

namespace bubblescope::engine {
namespace {

layout::ModelConfig tinyMoe(int32_t experts, int32_t topK, int32_t moeEvery) {
  auto c = layout::modelPreset("tiny").value();
  c.experts = experts;
  c.topK = topK;
  c.moeEvery = moeEvery;
  return c;
}

TEST(MoeModelTest, ParameterCountIncludesEveryExpert) {
  // tiny: V 256, T 32, L 2, C 32, F 128. Dense block 12704, of it the MLP
  // 2·C·F + F + C = 8352; the MoE block h.1: 12704 − 8352 + router 4·32 +
  // 4 · 8352 = 37888; embedding 9216; head 8256.
  const auto config = tinyMoe(4, 1, 2);
  EXPECT_EQ(config.blockParameterCount(0), 12704);
  EXPECT_EQ(config.blockParameterCount(1), 37888);
  EXPECT_EQ(config.parameterCount(), 9216 + 12704 + 37888 + 8256);
  EXPECT_EQ(config.activeParameterCount(), 9216 + 12704 + 37888 - 3 * 8352 + 8256);
  EXPECT_EQ(layout::largestSlotParameters(config), 37888);
  Allocator allocator;
  auto model = GptModel::create(config, &allocator);
  ASSERT_TRUE(model.isOk()) << model.status().toString();
  EXPECT_EQ((*model)->parameterCount(), config.parameterCount());
  EXPECT_NE((*model)->findParameter("h.1.moe.experts.3.proj.weight"), nullptr);
  EXPECT_EQ((*model)->findParameter("h.1.mlp.fc.weight"), nullptr);
  EXPECT_NE((*model)->findParameter("h.0.mlp.fc.weight"), nullptr);
  // The dense model is counted as before.
  EXPECT_EQ(layout::modelPreset("tiny").value().parameterCount(), 9216 + 2 * 12704 + 8256);
}

layout::ModelConfig gradMoeConfig() {
  auto c = testing::tinyDecoderConfig();  // 2 layers of hidden 8, F 16
  c.experts = 3;
  c.topK = 2;
  c.capacityFactor = 0.8;  // 10 tokens: capacity ceil(0.8·10·2/3) = 6 < the busiest load
  c.moeEvery = 2;          // h.0 dense, h.1 MoE
  c.auxLossCoef = 0.2;
  return c;
}

TEST(MoeModelTest, WholeModelMatchesFiniteDifferencesWithAuxLoss) {
  const auto config = gradMoeConfig();
  Allocator allocator;
  auto model = GptModelT<double>::create(config, &allocator);
  ASSERT_TRUE(model.isOk()) << model.status().toString();
  auto& m = **model;
  m.initialize(7);
  testing::perturbParameters(m, 8);
  const int64_t B = 2, T = 5;
  const auto batch = testing::randomTokens(B * T, config.vocabSize, 9);
  auto acts = std::move(m.newActivations(B, T).value());
  StageInputT<double> input{batch.tokens, {}, batch.targets};
  const double lossScale = 0.5;
  // The trained objective: lossScale · (cross-entropy + α · aux of h.1).
  auto loss = [&] {
    const double ce = m.forward(*acts, input).value();
    return lossScale * (ce + config.auxLossCoef * acts->blocks[1].moe.auxLoss);
  };
  loss();
  const auto stats = m.takeMoeStats();
  ASSERT_EQ(stats.size(), 1u);
  int64_t dropped = 0;
  for (int64_t d : stats[0].dropped) dropped += d;
  EXPECT_GT(dropped, 0) << "the check should cover dropped tokens";
  m.zeroGrad();
  ASSERT_TRUE(m.backward(*acts, {}, lossScale).isOk());
  for (auto* p : m.parameters()) {
    const size_t n = p->name == "wpe.weight" ? static_cast<size_t>(T * 8) : p->value.numel();
    testing::expectGradientsMatch(p->name, loss, p->value.data(), p->grad.data(), n);
  }
}

TEST(MoeModelTest, SplitBackwardEqualsBackwardBitForBit) {
  const auto config = gradMoeConfig();
  Allocator allocator;
  auto a = std::move(GptModel::create(config, &allocator).value());
  auto b = std::move(GptModel::create(config, &allocator).value());
  a->initialize(3);
  b->initialize(3);
  const auto batch = testing::randomTokens(2 * 6, config.vocabSize, 4);
  StageInput input{batch.tokens, {}, batch.targets};
  auto actsA = std::move(a->newActivations(2, 6).value());
  auto actsB = std::move(b->newActivations(2, 6).value());
  ASSERT_TRUE(a->forward(*actsA, input).isOk());
  ASSERT_TRUE(b->forward(*actsB, input).isOk());
  a->zeroGrad();
  b->zeroGrad();
  ASSERT_TRUE(a->backward(*actsA, {}, 0.25).isOk());
  ASSERT_TRUE(b->backwardInput(*actsB, {}, 0.25).isOk());
  ASSERT_TRUE(b->backwardWeight(*actsB).isOk());
  const auto pa = a->parameters(), pb = b->parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i) {
    const auto ga = pa[i]->grad.span(), gb = pb[i]->grad.span();
    EXPECT_TRUE(std::equal(ga.begin(), ga.end(), gb.begin())) << pa[i]->name;
  }
}

TEST(MoeModelTest, TinyMoeLearnsAndCountsEveryAssignment) {
  TrainerOptions o;
  o.model = tinyMoe(4, 2, 1);
  o.batchSize = 8;
  o.microBatches = 2;
  o.seed = 1234;
  o.schedule = {.peak = 3e-3, .minRatio = 0.1, .warmupSteps = 5, .totalSteps = 30};
  auto trainer = RankTrainer::create(o);
  ASSERT_TRUE(trainer.isOk()) << trainer.status().toString();
  std::vector<double> losses;
  for (int i = 0; i < 30; ++i) {
    auto r = (*trainer)->step();
    ASSERT_TRUE(r.isOk()) << r.status().toString();
    losses.push_back(r->loss);
    const auto stats = (*trainer)->model().takeMoeStats();
    ASSERT_EQ(stats.size(), 2u);
    for (const auto& s : stats) {
      int64_t routed = 0;
      for (size_t e = 0; e < s.routed.size(); ++e) {
        routed += s.routed[e];
        EXPECT_LE(s.dropped[e], s.routed[e]);
        // Each micro-batch keeps at most the capacity per expert.
        EXPECT_LE(s.routed[e] - s.dropped[e], 2 * o.model.expertCapacity(8 * 32));
      }
      EXPECT_EQ(routed, 2 * 8 * 32 * 2);  // micro-batches · B · T · top_k
      EXPECT_EQ(s.forwards, 2);
    }
  }
  EXPECT_NEAR(losses.front(), std::log(256.0), 0.3);
  double last5 = 0.0;
  for (size_t i = losses.size() - 5; i < losses.size(); ++i) last5 += losses[i] / 5;
  EXPECT_LT(last5, losses.front() - 1.5) << "first " << losses.front() << " last " << last5;
}

TEST(MoeModelTest, ConfigChecksAndJsonRoundTrip) {
  auto bad = tinyMoe(4, 3, 1);
  bad.capacityFactor = 0;
  const Status status = layout::validate(bad);
  ASSERT_FALSE(status.isOk());
  EXPECT_NE(status.message().find("top_k must be 1 or 2, got 3"), std::string::npos);
  EXPECT_NE(status.message().find("capacity_factor must be a positive number"), std::string::npos);
  EXPECT_FALSE(layout::validate(tinyMoe(4, 1, 3)).isOk());  // moe_every > layers
  auto moe = tinyMoe(8, 2, 2);
  moe.capacityFactor = 1.25;
  const auto back = layout::modelConfigFromJson(layout::toJson(moe));
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(back->experts, 8);
  EXPECT_EQ(back->topK, 2);
  EXPECT_EQ(back->moeEvery, 2);
  EXPECT_EQ(back->capacityFactor, 1.25);
  EXPECT_EQ(back->parameterCount(), moe.parameterCount());
  EXPECT_FALSE(layout::toJson(layout::modelPreset("tiny").value()).contains("experts"));
  EXPECT_EQ(moe.expertCapacity(256), 80);  // ceil(1.25 · 256 · 2 / 8)
}

}  // namespace
}  // namespace bubblescope::engine
