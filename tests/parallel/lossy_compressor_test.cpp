// Int8, Top-K and PowerSGD: each one's own maths, and the error-feedback
// identity they share: over steps, sum of decoded + final residual = sum of
// inputs, up to the fp32 rounding of the two additions a step makes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "engine/parallel/int8_compressor.h"
#include "engine/parallel/power_sgd_compressor.h"
#include "engine/parallel/top_k_compressor.h"

namespace bubblescope::engine {
namespace {

constexpr double kUnit = 0x1p-24;  // fp32 unit roundoff

std::vector<float> randomGrad(std::mt19937& rng, int64_t n, float scale = 1.0f) {
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> g(n);
  for (float& x : g) x = normal(rng);
  return g;
}

// --- Int8 -----------------------------------------------------------------

TEST(Int8CompressorTest, ErrorIsWithinHalfTheChunkScaleAndCodesUseTheFullRange) {
  std::mt19937 rng(3);
  const int64_t n = 1000, chunk = 64;  // 16 chunks, the last one partial (40)
  std::vector<float> g = randomGrad(rng, n);
  for (int64_t i = 0; i < n; ++i) g[i] *= std::exp2(static_cast<float>(i / chunk) - 8.0f);
  std::fill(g.begin() + 128, g.begin() + 192, 0.0f);  // an all-zero chunk
  Int8Compressor c(n, chunk);
  CompressedGrad packed;
  ASSERT_TRUE(c.compress(g, packed).isOk());
  ASSERT_EQ(packed.scales.size(), 16u);
  EXPECT_EQ(packed.bytes(), n + 4 * 16);
  std::vector<float> d(n);
  ASSERT_TRUE(c.decompress(packed, d).isOk());
  for (int64_t k = 0; k < 16; ++k) {
    const int64_t begin = k * chunk, end = std::min(n, begin + chunk);
    float maxAbs = 0.0f;
    int maxCode = 0;
    for (int64_t i = begin; i < end; ++i) {
      maxAbs = std::max(maxAbs, std::fabs(g[i]));
      maxCode = std::max(maxCode, std::abs(static_cast<int>(packed.codes[i])));
    }
    const double scale = packed.scales[k];
    EXPECT_NEAR(scale, maxAbs / 127.0, maxAbs / 127.0 * kUnit) << "chunk " << k;
    EXPECT_EQ(maxCode, maxAbs > 0 ? 127 : 0) << "chunk " << k;
    // |v - round(fl(v / s)) s| <= s / 2 + the two roundings (|v / s| <= 128).
    const double bound = scale * (0.5 + 2 * 128 * kUnit);
    for (int64_t i = begin; i < end; ++i) {
      ASSERT_FALSE(std::isnan(d[i]));
      ASSERT_LE(std::fabs(static_cast<double>(g[i]) - d[i]), bound) << "element " << i;
      // The residual is what was not sent.
      ASSERT_EQ(c.residual()[i], g[i] - d[i]) << i;
    }
  }
  EXPECT_EQ(d[150], 0.0f);
}

// --- Top-K ----------------------------------------------------------------

TEST(TopKCompressorTest, KeepsExactlyTheKLargestMagnitudes) {
  std::mt19937 rng(5);
  const int64_t n = 1000;
  std::vector<float> g = randomGrad(rng, n);
  TopKCompressor c(n, 0.05);
  ASSERT_EQ(c.keptElements(), 50);
  CompressedGrad packed;
  ASSERT_TRUE(c.compress(g, packed).isOk());
  EXPECT_EQ(packed.bytes(), 50 * 8);

  std::vector<int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int32_t a, int32_t b) { return std::fabs(g[a]) > std::fabs(g[b]); });
  ASSERT_GT(std::fabs(g[order[49]]), std::fabs(g[order[50]]));  // no tie at the cut
  std::vector<int32_t> expected(order.begin(), order.begin() + 50);
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(packed.indices, expected);
  std::vector<float> d(n);
  ASSERT_TRUE(c.decompress(packed, d).isOk());
  for (int64_t i = 0; i < n; ++i) {
    const bool kept = std::binary_search(expected.begin(), expected.end(), i);
    EXPECT_EQ(d[i], kept ? g[i] : 0.0f) << i;
    EXPECT_EQ(c.residual()[i], kept ? 0.0f : g[i]) << i;
  }
}

TEST(TopKCompressorTest, TiesKeepTheLowerIndexAndKIsTheCeiling) {
  TopKCompressor c(5, 0.3);  // ceil(1.5) = 2
  ASSERT_EQ(c.keptElements(), 2);
  const std::vector<float> g = {1.0f, -3.0f, 3.0f, 3.0f, 0.5f};
  CompressedGrad packed;
  ASSERT_TRUE(c.compress(g, packed).isOk());
  EXPECT_EQ(packed.indices, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(packed.values, (std::vector<float>{-3.0f, 3.0f}));
  EXPECT_EQ(TopKCompressor(1000, 1e-9).keptElements(), 1);  // at least one
}

TEST(TopKCompressorTest, RatioOneEqualsTheInputExactlyEveryStep) {
  std::mt19937 rng(9);
  const int64_t n = 777;
  TopKCompressor c(n, 1.0);
  for (int step = 0; step < 3; ++step) {
    std::vector<float> g = randomGrad(rng, n, 1e-3f);
    g[step] = -0.0f;
    CompressedGrad packed;
    ASSERT_TRUE(c.compress(g, packed).isOk());
    std::vector<float> d(n);
    ASSERT_TRUE(c.decompress(packed, d).isOk());
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(d[i], g[i]) << "step " << step << " element " << i;
      ASSERT_EQ(c.residual()[i], 0.0f);
    }
  }
}

// --- PowerSGD -------------------------------------------------------------

// Frobenius norm in double.
double frobenius(std::span<const float> a) {
  double s = 0.0;
  for (float x : a) s += double(x) * double(x);
  return std::sqrt(s);
}

TEST(PowerSgdCompressorTest, RecoversAnExactlyRankRMatrixWithOrthonormalP) {
  std::mt19937 rng(13);
  const int64_t rows = 24, cols = 16;
  const int32_t r = 3;
  const std::vector<float> a = randomGrad(rng, rows * r), b = randomGrad(rng, cols * r);
  std::vector<float> m(rows * cols);  // (rows, cols) = A B^T, rank 3
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t c = 0; c < cols; ++c) {
      double s = 0.0;
      for (int32_t j = 0; j < r; ++j) s += double(a[i * r + j]) * b[c * r + j];
      m[i * cols + c] = static_cast<float>(s);
    }
  PowerSgdCompressor comp(rows, cols, r, /*seed=*/42);
  CompressedGrad packed;
  ASSERT_TRUE(comp.compress(m, packed).isOk());
  EXPECT_EQ(packed.bytes(), 4 * r * (rows + cols));
  std::vector<float> d(rows * cols);
  ASSERT_TRUE(comp.decompress(packed, d).isOk());
  // P P^T M = M when P spans M's columns. Each stored factor carries a
  // relative rounding of u; the span of P is off by about u cond(P) with
  // cond(P) modest for a Gaussian Q: 64 u ||M|| leaves a wide margin, and a
  // missing orthonormalisation or transposed factor is off by O(||M||).
  std::vector<float> diff(m.size());
  for (size_t i = 0; i < m.size(); ++i) diff[i] = m[i] - d[i];
  const double bound = 64 * kUnit * frobenius(m);
  EXPECT_LE(frobenius(diff), bound) << "||M|| " << frobenius(m);
  for (size_t i = 0; i < m.size(); ++i) ASSERT_EQ(comp.residual()[i], m[i] - d[i]);
  // P has orthonormal columns.
  for (int32_t j = 0; j < r; ++j)
    for (int32_t k = 0; k < r; ++k) {
      double dot = 0.0;
      for (int64_t i = 0; i < rows; ++i)
        dot += double(packed.values[i * r + j]) * packed.values[i * r + k];
      EXPECT_NEAR(dot, j == k ? 1.0 : 0.0, 16 * rows * kUnit) << j << "," << k;
    }
  // The Q sent is the warm start kept for the next step.
  const std::span<const float> q(packed.values.data() + rows * r, cols * r);
  EXPECT_TRUE(std::equal(q.begin(), q.end(), comp.warmQ().begin(), comp.warmQ().end()));
}

TEST(PowerSgdCompressorTest, WarmStartIsPowerIterationOnAFixedMatrix) {
  // Fed the same full-rank M with the residual subtracted back out, the input
  // each step is M, and the warm-started Q makes the rank-1 factorisation
  // converge to the top singular pair: the error falls to sqrt(sum of the
  // other singular values squared). Here M = diag(4, 1, 0.5).
  const std::vector<float> m = {4, 0, 0, 0, 1, 0, 0, 0, 0.5f};
  PowerSgdCompressor comp(3, 3, 1, /*seed=*/1);
  std::vector<float> d(9), input(9);
  double err = 0.0;
  for (int step = 0; step < 30; ++step) {
    for (int i = 0; i < 9; ++i) input[i] = m[i] - comp.residual()[i];  // so grad + residual = M
    CompressedGrad packed;
    ASSERT_TRUE(comp.compress(input, packed).isOk());
    ASSERT_TRUE(comp.decompress(packed, d).isOk());
    std::vector<float> diff(9);
    for (int i = 0; i < 9; ++i) diff[i] = m[i] - d[i];
    err = frobenius(diff);
  }
  EXPECT_NEAR(err, std::sqrt(1.0 + 0.25), 1e-4);  // (1/4)^30 of the start is left
}

// --- Error feedback, shared -------------------------------------------------

void expectErrorFeedbackConserves(GradCompressor& c, int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<double> inputs(n, 0.0), decoded(n, 0.0), bound(n, 0.0);
  std::vector<float> d(n);
  bool residualSeen = false;
  for (int step = 0; step < 10; ++step) {
    const std::vector<float> g = randomGrad(rng, n);
    CompressedGrad packed;
    ASSERT_TRUE(c.compress(g, packed).isOk()) << c.name();
    ASSERT_TRUE(c.decompress(packed, d).isOk());
    for (int64_t i = 0; i < n; ++i) {
      inputs[i] += g[i];
      decoded[i] += d[i];
      // corrected = fl(g + r_prev), residual = fl(corrected - d): each
      // rounds by u of its magnitude, |corrected| <= |g| + |r_prev|.
      bound[i] += 2 * kUnit * (std::fabs(g[i]) + 2 * std::fabs(c.residual()[i]));
      residualSeen = residualSeen || c.residual()[i] != 0.0f;
    }
  }
  EXPECT_TRUE(residualSeen) << c.name() << " carried no residual";
  for (int64_t i = 0; i < n; ++i) {
    const double total = decoded[i] + c.residual()[i];
    ASSERT_FALSE(std::isnan(total));
    ASSERT_LE(std::fabs(total - inputs[i]), bound[i] + 4 * kUnit * std::fabs(inputs[i]))
        << c.name() << " element " << i;
  }
}

TEST(ErrorFeedbackTest, DecodedPlusResidualSumsToTheInputs) {
  Int8Compressor int8(300, 64);
  expectErrorFeedbackConserves(int8, 300, 1);
  TopKCompressor topk(300, 0.1);
  expectErrorFeedbackConserves(topk, 300, 2);
  PowerSgdCompressor powerSgd(20, 15, 2);
  expectErrorFeedbackConserves(powerSgd, 300, 3);
}

TEST(ErrorFeedbackTest, ANonFiniteGradientIsAnErrorAndKeepsTheResidual) {
  TopKCompressor c(4, 0.25);
  CompressedGrad packed;
  ASSERT_TRUE(c.compress(std::vector<float>{1, 2, 3, 4}, packed).isOk());
  const std::vector<float> before(c.residual().begin(), c.residual().end());
  const Status s = c.compress(std::vector<float>{1, NAN, 3, 4}, packed);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.toString().find("topk: gradient element 1 is not finite"), std::string::npos)
      << s.toString();
  EXPECT_TRUE(std::equal(before.begin(), before.end(), c.residual().begin()));
  EXPECT_FALSE(c.compress(std::vector<float>{1, 2, 3}, packed).isOk());  // wrong size
}

}  // namespace
}  // namespace bubblescope::engine
