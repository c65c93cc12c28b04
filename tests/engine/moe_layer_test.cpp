// The mixture-of-experts feed-forward (engine/moe_layer.h): gradients
// against finite differences (double), the float layer against an
// independent double implementation written here from docs/engine.md, and
// routing and dropping in constructed cases.
#include "engine/moe_layer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/cpu_backend.h"
#include "tests/engine/grad_check.h"

namespace bubblescope::engine {
namespace {

// C 8, F 16, E 4.
layout::ModelConfig moeConfig(int32_t topK, double capacityFactor) {
  layout::ModelConfig c;
  c.preset = "custom";
  c.vocabSize = 11;
  c.seqLen = 6;
  c.numLayers = 1;
  c.hidden = 8;
  c.numHeads = 2;
  c.mlpRatio = 2;
  c.experts = 4;
  c.topK = topK;
  c.capacityFactor = capacityFactor;
  c.auxLossCoef = 0.3;  // large, so the aux gradient is visible in the check
  return c;
}

template <class S>
void randomizeParameters(MoeFeedForwardT<S>& layer, uint64_t seed) {
  for (auto* p : layer.parameters()) {
    const auto v = testing::randomVector(static_cast<size_t>(p->value.numel()), seed++, 0.5);
    std::transform(v.begin(), v.end(), p->value.data(), [](double x) { return static_cast<S>(x); });
  }
}

int64_t sum(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t{0});
}

// Finite differences of L = Σ w·y + α·aux with respect to the input and
// every parameter; capacity factors that drop some assignments and not.
void checkGradients(int32_t topK, double capacityFactor, bool expectDrops) {
  const auto config = moeConfig(topK, capacityFactor);
  const int64_t n = 12, c = config.hidden;
  MoeFeedForwardT<double> layer(config, "h.0", 0.02, nullptr, LayerOpsT<double>());
  randomizeParameters(layer, 5);
  auto x = testing::randomVector(static_cast<size_t>(n * c), 3);
  const auto w = testing::randomVector(static_cast<size_t>(n * c), 4);
  auto acts = layer.newActivations(n, nullptr);
  auto keep = layer.newGradKeep(n, nullptr);
  std::vector<double> y(static_cast<size_t>(n * c));
  auto loss = [&] {
    EXPECT_TRUE(layer.forward(y.data(), x.data(), acts).isOk());
    return std::inner_product(y.begin(), y.end(), w.begin(), 0.0) +
           config.auxLossCoef * acts.auxLoss;
  };
  loss();
  EXPECT_EQ(sum(acts.dropped) > 0, expectDrops) << "dropped " << sum(acts.dropped);
  EXPECT_EQ(sum(acts.routed), n * topK);
  std::vector<double> dx(x.size(), 0.0);
  for (auto* p : layer.parameters()) std::fill(p->grad.data(), p->grad.data() + p->grad.numel(), 0);
  EXPECT_TRUE(layer.backwardInput(dx.data(), w.data(), acts, keep, /*lossScale=*/1.0).isOk());
  layer.backwardWeight(x.data(), acts, keep);
  testing::expectGradientsMatch("x", loss, x.data(), dx.data(), x.size());
  for (auto* p : layer.parameters()) {
    bool used = true;  // an expert that took no token has no gradient: skip it
    for (int32_t e = 0; e < config.experts; ++e) {
      const bool idle = acts.routed[e] == acts.dropped[e];
      if (idle && p->name.find(".experts." + std::to_string(e) + ".") != std::string::npos) {
        used = false;
      }
    }
    if (used) {
      testing::expectGradientsMatch(p->name, loss, p->value.data(), p->grad.data(),
                                    static_cast<size_t>(p->value.numel()));
    }
  }
}

TEST(MoeLayerTest, Top1GradientsMatchFiniteDifferences) {
  checkGradients(1, 2.0, false);
}
TEST(MoeLayerTest, Top1WithDropsGradientsMatchFiniteDifferences) {
  checkGradients(1, 0.5, true);
}
TEST(MoeLayerTest, Top2GradientsMatchFiniteDifferences) {
  checkGradients(2, 2.0, false);
}
TEST(MoeLayerTest, Top2WithDropsGradientsMatchFiniteDifferences) {
  checkGradients(2, 0.5, true);
}

// The layer's maths, written again from docs/engine.md in double and in the
// most direct way (sort the experts, place the assignments, sum).
struct Reference {
  std::vector<double> y;                 // (N, C)
  std::vector<int64_t> routed, dropped;  // (E)
  double aux = 0.0;
};

double gelu(double u) {
  return 0.5 * u * (1.0 + std::tanh(0.7978845608028654 * (u + 0.044715 * u * u * u)));
}

Reference reference(const layout::ModelConfig& cfg, MoeFeedForwardT<float>& layer,
                    const std::vector<double>& x, int64_t n) {
  const int64_t c = cfg.hidden, f = cfg.mlpHidden(), e = cfg.experts, k = cfg.topK;
  const auto params = layer.parameters();
  auto value = [&](size_t index, int64_t i) { return double{params[index]->value.data()[i]}; };
  std::vector<double> probs(static_cast<size_t>(n * e));
  for (int64_t i = 0; i < n; ++i) {
    double total = 0.0;
    for (int64_t j = 0; j < e; ++j) {
      double z = 0.0;
      for (int64_t d = 0; d < c; ++d) z += value(0, j * c + d) * x[i * c + d];
      probs[i * e + j] = std::exp(z);
      total += probs[i * e + j];
    }
    for (int64_t j = 0; j < e; ++j) probs[i * e + j] /= total;
  }
  Reference r;
  r.y.assign(static_cast<size_t>(n * c), 0.0);
  r.routed.assign(e, 0);
  r.dropped.assign(e, 0);
  const int64_t capacity = static_cast<int64_t>(std::ceil(cfg.capacityFactor * n * k / e));
  std::vector<std::vector<int64_t>> order(n);  // experts by probability, ties to the lower index
  for (int64_t i = 0; i < n; ++i) {
    order[i].resize(e);
    std::iota(order[i].begin(), order[i].end(), 0);
    std::stable_sort(order[i].begin(), order[i].end(),
                     [&](int64_t a, int64_t b) { return probs[i * e + a] > probs[i * e + b]; });
  }
  std::vector<int64_t> load(e, 0);
  for (int64_t j = 0; j < k; ++j) {  // choice by choice, tokens in order
    for (int64_t i = 0; i < n; ++i) {
      const int64_t ex = order[i][j];
      ++r.routed[ex];
      if (load[ex] == capacity) {
        ++r.dropped[ex];
        continue;
      }
      ++load[ex];
      double gate = probs[i * e + ex];
      if (k == 2) gate /= probs[i * e + order[i][0]] + probs[i * e + order[i][1]];
      std::vector<double> h(f);
      for (int64_t o = 0; o < f; ++o) {
        double s = value(2 + 4 * ex, o);
        for (int64_t d = 0; d < c; ++d) s += value(1 + 4 * ex, o * c + d) * x[i * c + d];
        h[o] = gelu(s);
      }
      for (int64_t d = 0; d < c; ++d) {
        double s = value(4 + 4 * ex, d);
        for (int64_t o = 0; o < f; ++o) s += value(3 + 4 * ex, d * f + o) * h[o];
        r.y[i * c + d] += gate * s;
      }
    }
  }
  for (int64_t ex = 0; ex < e; ++ex) {
    double first = 0.0, mean = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      first += order[i][0] == ex ? 1.0 : 0.0;
      mean += probs[i * e + ex];
    }
    r.aux += static_cast<double>(e) * (first / n) * (mean / n);
  }
  return r;
}

void checkAgainstReference(int32_t topK, double capacityFactor) {
  const auto config = moeConfig(topK, capacityFactor);
  const int64_t n = 24, c = config.hidden;
  CpuBackend backend;
  MoeFeedForwardT<float> layer(config, "h.0", 0.02, &backend.allocator(),
                               LayerOpsT<float>(&backend));
  randomizeParameters(layer, 11);
  const auto x = testing::randomVector(static_cast<size_t>(n * c), 12);
  std::vector<float> xf(x.begin(), x.end()), y(x.size());
  auto acts = layer.newActivations(n, &backend.allocator());
  EXPECT_TRUE(layer.forward(y.data(), xf.data(), acts).isOk());
  const Reference r = reference(config, layer, x, n);
  EXPECT_EQ(acts.routed, r.routed);
  EXPECT_EQ(acts.dropped, r.dropped);
  // fp32 products of length C and F of O(1) values: 1e-4 is ~100 ulps of
  // the outputs' scale, far below a wrong gate or a misplaced token.
  for (size_t i = 0; i < y.size(); ++i) {
    ASSERT_NEAR(y[i], r.y[i], 1e-4 * (1.0 + std::abs(r.y[i]))) << "element " << i;
  }
  EXPECT_NEAR(acts.auxLoss, r.aux, 1e-6);
}

TEST(MoeLayerTest, FloatForwardMatchesDoubleReferenceTop1) {
  checkAgainstReference(1, 1.0);
}
TEST(MoeLayerTest, FloatForwardMatchesDoubleReferenceTop2) {
  checkAgainstReference(2, 1.0);
}
TEST(MoeLayerTest, FloatForwardMatchesDoubleReferenceTop2Dropping) {
  checkAgainstReference(2, 0.5);
}

// C 2, E 2, router = identity: token (1, 0) prefers expert 0, (0, 1) expert 1.
MoeFeedForwardT<double> identityRouted(const layout::ModelConfig& config) {
  MoeFeedForwardT<double> layer(config, "h.0", 0.02, nullptr, LayerOpsT<double>());
  randomizeParameters(layer, 21);
  double* router = layer.parameters()[0]->value.data();
  std::copy_n(std::vector<double>{4, 0, 0, 4}.data(), 4, router);
  return layer;
}

layout::ModelConfig twoExperts(int32_t topK, double capacityFactor) {
  auto c = moeConfig(topK, capacityFactor);
  c.hidden = 2;
  c.numHeads = 1;
  c.experts = 2;
  return c;
}

TEST(MoeLayerTest, Top1DropsTheLastTokensOverCapacityInTokenOrder) {
  const auto config = twoExperts(1, 1.0);
  const int64_t n = 6;  // capacity ceil(1.0 · 6 · 1 / 2) = 3
  ASSERT_EQ(config.expertCapacity(n), 3);
  auto layer = identityRouted(config);
  const std::vector<double> x = {1, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1, 0};  // tokens 0-3, 5: expert 0
  auto acts = layer.newActivations(n, nullptr);
  std::vector<double> y(x.size(), 7.0);
  EXPECT_TRUE(layer.forward(y.data(), x.data(), acts).isOk());
  EXPECT_EQ(acts.routed, (std::vector<int64_t>{5, 1}));
  EXPECT_EQ(acts.dropped, (std::vector<int64_t>{2, 0}));
  // Tokens 3 and 5, the 4th and 5th for expert 0, drop: their output is 0.
  const std::vector<int64_t> rows = {0, 1, 2, -1, 3, -1};
  EXPECT_EQ(acts.row, rows);
  for (int64_t i : {3, 5}) {
    EXPECT_EQ(y[i * 2], 0.0);
    EXPECT_EQ(y[i * 2 + 1], 0.0);
  }
  for (int64_t i : {0, 1, 2, 4}) EXPECT_NE(y[i * 2], 0.0);
}

TEST(MoeLayerTest, Top2PlacesFirstChoicesBeforeSecondChoices) {
  const auto config = twoExperts(2, 0.5);
  const int64_t n = 3;  // capacity ceil(0.5 · 3 · 2 / 2) = 2
  ASSERT_EQ(config.expertCapacity(n), 2);
  auto layer = identityRouted(config);
  // Choices: token 0 (0, 1), token 1 (1, 0), token 2 (0, 1). First choices
  // take rows 0, 2+0 and 1; then token 0's second fits, tokens 1's and 2's
  // drop. (Token by token, token 2's first choice would drop instead.)
  const std::vector<double> x = {1, 0, 0, 1, 1, 0};
  auto acts = layer.newActivations(n, nullptr);
  std::vector<double> y(x.size());
  EXPECT_TRUE(layer.forward(y.data(), x.data(), acts).isOk());
  EXPECT_EQ(acts.expert, (std::vector<int32_t>{0, 1, 1, 0, 0, 1}));
  EXPECT_EQ(acts.row, (std::vector<int64_t>{0, 3, 2, -1, 1, -1}));
  EXPECT_EQ(acts.routed, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(acts.dropped, (std::vector<int64_t>{1, 1}));
  // Gates of a token sum to 1.
  for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(acts.gate[2 * i] + acts.gate[2 * i + 1], 1.0, 1e-12);
}

TEST(MoeLayerTest, AuxLossIsOneWhenBalancedAndGrowsWithImbalance) {
  const auto config = twoExperts(1, 2.0);
  auto layer = identityRouted(config);
  auto acts = layer.newActivations(4, nullptr);
  std::vector<double> y(8);
  const std::vector<double> balanced = {1, 0, 0, 1, 1, 0, 0, 1};
  EXPECT_TRUE(layer.forward(y.data(), balanced.data(), acts).isOk());
  EXPECT_NEAR(acts.auxLoss, 1.0, 1e-12);  // f = (1/2, 1/2), P symmetric: 2 · (½P0 + ½P1) = 1
  const std::vector<double> skewed = {1, 0, 1, 0, 1, 0, 1, 0};
  EXPECT_TRUE(layer.forward(y.data(), skewed.data(), acts).isOk());
  const double p0 = 1.0 / (1.0 + std::exp(-4.0));  // softmax of (4, 0)
  EXPECT_NEAR(acts.auxLoss, 2.0 * p0, 1e-12);      // f = (1, 0)
}

}  // namespace
}  // namespace bubblescope::engine
