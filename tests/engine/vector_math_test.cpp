// cpu_vector_math.h: vexp within 2 ulp of e^x over its range, and laneSum
// equal to the sum of its terms (another order: within rounding), and the
// blocked causal attention across several query blocks (T = 70: blocks of
// 32, 32 and 6) in fp32 against the double reference.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engine/cpu_kernels.h"
#include "engine/cpu_vector_math.h"
#include "tests/engine/grad_check.h"

namespace bubblescope::engine {
namespace {

namespace k = kernels;

TEST(VectorMathTest, ExpIsWithinTwoUlp) {
  double worst = 0.0;
  for (double x = -87.0; x <= 88.0; x += 0.001953125) {  // 89,601 points, exact in fp32
    const double want = std::exp(x);
    const double got = k::vexp(static_cast<float>(x));
    const double ulps = std::fabs(got - want) / (want * std::ldexp(1.0, -23));
    if (!(ulps <= worst)) worst = std::isnan(ulps) ? INFINITY : ulps;
  }
  EXPECT_LE(worst, 2.0);
  // Clamped outside [-87, 88] rather than overflowing to inf or a bad exponent.
  EXPECT_FLOAT_EQ(k::vexp(200.0f), k::vexp(88.0f));
  EXPECT_FLOAT_EQ(k::vexp(-200.0f), k::vexp(-87.0f));
  EXPECT_TRUE(std::isfinite(k::vexp(1e30f)));
}

TEST(VectorMathTest, LaneSumAddsEveryTermOnce) {
  for (int64_t n : {0, 1, 15, 16, 17, 100, 1000}) {
    // Integers: exact in any order, so any dropped or doubled term shows.
    const float got = k::laneSum<float>(n, [](int64_t i) { return static_cast<float>(i + 1); });
    EXPECT_EQ(got, static_cast<float>(n * (n + 1) / 2)) << n;
  }
}

TEST(VectorMathTest, BlockedAttentionMatchesDoubleAcrossBlocks) {
  const int64_t B = 1, T = 70, C = 8, NH = 2;
  const auto qkvD = testing::randomVector(B * T * 3 * C, 31);
  const auto rD = testing::randomVector(B * T * C, 32);
  std::vector<float> qkvF(qkvD.begin(), qkvD.end()), rF(rD.begin(), rD.end());
  std::vector<double> outD(B * T * C), attD(B * NH * T * T), dD(qkvD.size(), 0.0), sD(T * T);
  std::vector<float> outF(B * T * C), attF(B * NH * T * T, 7.0f), dF(qkvD.size(), 0.0f), sF(T * T);
  k::attentionForward(outD.data(), attD.data(), qkvD.data(), B, T, C, NH);
  k::attentionForward(outF.data(), attF.data(), qkvF.data(), B, T, C, NH);
  k::attentionBackward(dD.data(), sD.data(), rD.data(), qkvD.data(), attD.data(), B, T, C, NH);
  k::attentionBackward(dF.data(), sF.data(), rF.data(), qkvF.data(), attF.data(), B, T, C, NH);
  for (size_t i = 0; i < outD.size(); ++i) EXPECT_NEAR(outF[i], outD[i], 1e-5) << i;
  for (size_t i = 0; i < dD.size(); ++i) EXPECT_NEAR(dF[i], dD[i], 1e-4) << i;
  for (int64_t h = 0; h < NH; ++h) {
    for (int64_t i = 0; i < T; ++i) {
      const float* row = attF.data() + (h * T + i) * T;
      double sum = 0.0;
      for (int64_t j = 0; j <= i; ++j) sum += row[j];
      EXPECT_NEAR(sum, 1.0, 1e-5) << "head " << h << " row " << i;
      for (int64_t j = i + 1; j < T; ++j) ASSERT_EQ(row[j], 0.0f) << i << "," << j;
    }
  }
}

TEST(VectorMathTest, BlockedAttentionGradientAcrossBlocks) {
  // Finite differences in double across the block boundaries (rows 31/32, 63/64).
  const int64_t B = 1, T = 70, C = 4, NH = 2;
  auto qkv = testing::randomVector(B * T * 3 * C, 33);
  const auto r = testing::randomVector(B * T * C, 34);
  std::vector<double> out(B * T * C), att(B * NH * T * T);
  auto loss = [&] {
    k::attentionForward(out.data(), att.data(), qkv.data(), B, T, C, NH);
    double l = 0.0;
    for (size_t i = 0; i < out.size(); ++i) l += out[i] * r[i];
    return l;
  };
  loss();
  std::vector<double> dqkv(qkv.size(), 0.0), scratch(T * T);
  k::attentionBackward(dqkv.data(), scratch.data(), r.data(), qkv.data(), att.data(), B, T, C, NH);
  testing::expectGradientsMatch("dqkv", loss, qkv.data(), dqkv.data(), qkv.size());
}

}  // namespace
}  // namespace bubblescope::engine
