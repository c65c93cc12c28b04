// The host/device maths of the CUDA kernels (engine/cuda/cuda_math.h),
// compiled for the host and checked against the CPU kernels. Needs no GPU:
// runs in CI (not labelled gpu). Where the header promises the CPU's exact
// expression the check is bit for bit. Where the CPU differs on purpose it
// is checked within a bound from the maths: the CPU's GELU takes its exp
// from vexp (within 2 ulp of expf), its layer norm row sums are added in
// kSumLanes partial sums (cpu_vector_math.h), and the online softmax is a
// different order of operations (within 1e-6 relative).
#include "engine/cuda/cuda_math.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "engine/adamw.h"
#include "engine/cpu_kernels.h"
#include "engine/cpu_vector_math.h"

namespace bubblescope::engine::cuda {
namespace {

namespace k = kernels;

std::vector<float> randomFloats(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

TEST(CudaMathTest, GeluAndItsGradientMatchTheCpuKernelBitForBit) {
  std::vector<float> x = randomFloats(4096, 1, 3.0f);
  for (float edge :
       {0.0f, -0.0f, 1e-20f, -1e-20f, 8.99f, 9.0f, 9.01f, -9.0f, 20.0f, -20.0f, 1e4f, -1e4f}) {
    x.push_back(edge);
  }
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<float> out(x.size()), grad(x.size(), 0.0f), ones(x.size(), 1.0f);
  k::geluForward(out.data(), x.data(), n);
  k::geluBackward(grad.data(), x.data(), ones.data(), n);  // grad = gelu'(x) * 1
  // Both compute tanh(u) = (e - 1) / (e + 1), e = exp(2u), u clamped to
  // [-9, 9]; their exps differ by at most 3 ulp (vexp's 2 plus expf's 1), so
  // each tanh is within 10 eps (eps = 2^-24) of the true one, counting u's
  // four roundings ((1 - tanh^2) |u| <= 0.45) and the quotient's three: the
  // two within 20 eps. gelu = x (1 + tanh) / 2 then differs by at most
  // 10 eps |x| plus two roundings of the result; the gradient's second term
  // x (1 - tanh^2) du / 2 by 21 eps |x du| (1 - tanh^2 moves by 2 * 20 eps
  // plus one rounding) plus its own roundings.
  constexpr double kEps = 0x1p-24;
  for (int64_t i = 0; i < n; ++i) {
    const double xi = x[i];
    const double du = kGeluScale * (1.0 + 3.0 * kGeluCube * xi * xi);
    const double outBound = kEps * (10.0 * std::abs(xi) + 4.0 * std::abs(out[i]));
    const double gradBound = kEps * (10.0 + 21.0 * std::abs(xi * du) + 8.0 * std::abs(grad[i]));
    // NaN-aware: a NaN on either side fails (the comparison is false).
    EXPECT_TRUE(std::abs(static_cast<double>(gelu(x[i])) - out[i]) <= outBound)
        << "x = " << x[i] << ": " << gelu(x[i]) << " vs " << out[i];
    EXPECT_TRUE(std::abs(static_cast<double>(geluGrad(x[i])) - grad[i]) <= gradBound)
        << "x = " << x[i] << ": " << geluGrad(x[i]) << " vs " << grad[i];
  }
  EXPECT_EQ(gelu(0.0f), 0.0f);
  EXPECT_NEAR(geluGrad(0.0f), 0.5f, 1e-7f);
  EXPECT_NEAR(gelu(1.0f), 0.841192f, 1e-6f);  // GPT-2's tanh GELU at 1
}

TEST(CudaMathTest, AdamWElementMatchesAdamwUpdateBitForBit) {
  const size_t n = 1000;
  AdamWConfig config;  // beta 0.9 / 0.95, eps 1e-8, weight decay 0.1
  for (bool decay : {true, false}) {
    std::vector<float> pCpu = randomFloats(n, 2), mCpu(n, 0.0f), vCpu(n, 0.0f);
    std::vector<float> p = pCpu, m = mCpu, v = vCpu;
    for (int64_t t = 1; t <= 5; ++t) {
      const std::vector<float> g = randomFloats(n, 10 + static_cast<uint32_t>(t), 0.1f);
      const double lr = 3e-4 * static_cast<double>(t);
      engine::adamwUpdate(pCpu, g, mCpu, vCpu, config, lr, t, decay);
      const AdamWScalars s =
          adamwScalars(config.beta1, config.beta2, config.eps, config.weightDecay, lr, t, decay);
      for (size_t i = 0; i < n; ++i) adamwElement(p[i], g[i], m[i], v[i], s);
      for (size_t i = 0; i < n; ++i) {
        ASSERT_EQ(p[i], pCpu[i]) << "step " << t << " element " << i;
        ASSERT_EQ(m[i], mCpu[i]);
        ASSERT_EQ(v[i], vCpu[i]);
      }
    }
  }
}

TEST(CudaMathTest, LayerNormRowStatsOutputAndInputGradMatchTheCpuKernel) {
  const int64_t n = 7, c = 96;
  std::vector<float> x = randomFloats(n * c, 3, 2.0f);
  for (int64_t i = 0; i < n * c; ++i) x[i] += 0.25f * static_cast<float>(i / c);  // row offsets
  const std::vector<float> w = randomFloats(c, 4), b = randomFloats(c, 5);
  const std::vector<float> dout = randomFloats(n * c, 6);
  std::vector<float> out(n * c), mean(n), rstd(n);
  k::layerNormForward(out.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), n, c);
  std::vector<float> dx(n * c, 0.0f), dw(c, 0.0f), db(c, 0.0f);
  k::layerNormBackward(dx.data(), dw.data(), db.data(), dout.data(), x.data(), w.data(),
                       mean.data(), rstd.data(), n, c);
  // The row statistics add the same terms in another order: two sums of c
  // terms differ by at most 2 gamma_c sum|term| (gamma_c = c eps / (1 - c eps)).
  constexpr double kEps = 0x1p-24;
  const double gammaC = c * kEps / (1.0 - c * kEps);
  for (int64_t r = 0; r < n; ++r) {
    const float* xr = x.data() + r * c;
    const RowStats s = layerNormRowStats(xr, c);
    double absSum = 0.0, mean64 = 0.0;
    for (int64_t i = 0; i < c; ++i) absSum += std::abs(xr[i]), mean64 += xr[i];
    mean64 /= static_cast<double>(c);
    const double meanBound = 2.0 * gammaC * absSum / c + 2.0 * kEps * std::abs(mean64);
    EXPECT_TRUE(std::abs(static_cast<double>(s.mean) - mean[r]) <= meanBound) << "row " << r;
    // var = sum (x - mean)^2 / c: the order (2 gamma_c), the two means
    // (each square moves by 2 |x - mean| dm + dm^2), then 1 / sqrt(var + eps)
    // halves the relative change and adds four roundings (two each side).
    double sq = 0.0, absDev = 0.0;
    for (int64_t i = 0; i < c; ++i) {
      sq += (xr[i] - mean64) * (xr[i] - mean64), absDev += std::abs(xr[i] - mean64);
    }
    const double var = sq / c;
    const double varBound =
        2.0 * gammaC * var * 1.01 + 2.0 * meanBound * absDev / c + meanBound * meanBound;
    const double rstdBound = rstd[r] * (0.5 * varBound / (var + 1e-5) + 4.0 * kEps);
    EXPECT_TRUE(std::abs(static_cast<double>(s.rstd) - rstd[r]) <= rstdBound) << "row " << r;
    // Given the same statistics, the element-wise parts are the CPU's exact
    // expressions: bit for bit, with the row means added as the CPU adds them.
    const RowStats cpu{mean[r], rstd[r]};
    const float gMean =
        kernels::laneSum<float>(c, [&](int64_t i) { return dout[r * c + i] * w[i]; }) /
        static_cast<float>(c);
    const float gxMean =
        kernels::laneSum<float>(
            c,
            [&](int64_t i) { return dout[r * c + i] * w[i] * ((xr[i] - cpu.mean) * cpu.rstd); }) /
        static_cast<float>(c);
    for (int64_t i = 0; i < c; ++i) {
      EXPECT_EQ(layerNormOut(xr[i], cpu, w[i], b[i]), out[r * c + i]);
      const float xhat = (xr[i] - cpu.mean) * cpu.rstd;
      EXPECT_EQ(layerNormInputGrad(dout[r * c + i] * w[i], xhat, cpu.rstd, gMean, gxMean),
                dx[r * c + i]);
    }
  }
}

TEST(CudaMathTest, OnlineSoftmaxMatchesCrossEntropyForward) {
  const int64_t n = 5, v = 1000;
  std::vector<float> logits = randomFloats(n * v, 7, 4.0f);
  logits[3 * v + 17] = 60.0f;  // a dominant logit: other probabilities underflow-adjacent
  const std::vector<int32_t> targets = {0, 999, 500, 4, 17};
  std::vector<float> probs = logits, losses(n);
  k::crossEntropyForward(probs.data(), losses.data(), targets.data(), n, v);
  for (int64_t r = 0; r < n; ++r) {
    const float* x = logits.data() + r * v;
    SoftmaxState s;
    for (int64_t j = 0; j < v; ++j) s = softmaxAdd(s, x[j]);
    // The same row split in 7 uneven chunks and merged gives the same state.
    SoftmaxState merged;
    for (int64_t start = 0; start < v; start += 143) {
      SoftmaxState part;
      for (int64_t j = start; j < std::min(v, start + 143); ++j) part = softmaxAdd(part, x[j]);
      merged = softmaxMerge(merged, part);
    }
    EXPECT_EQ(merged.max, s.max);
    EXPECT_NEAR(merged.sum, s.sum, 1e-5f * s.sum);  // a different rounding order
    const float inv = 1.0f / s.sum;
    for (int64_t j = 0; j < v; ++j) {
      const float p = expf(x[j] - s.max) * inv;
      EXPECT_NEAR(p, probs[r * v + j], 1e-6f * probs[r * v + j] + 1e-30f);
    }
    EXPECT_NEAR(crossEntropyLoss(s.sum, s.max, x[targets[r]]), losses[r],
                1e-6f * std::abs(losses[r]) + 1e-6f);
  }
  SoftmaxState empty;
  EXPECT_EQ(softmaxMerge(empty, empty).sum, 0.0f);
}

TEST(CudaMathTest, CrossEntropyGradMatchesCrossEntropyBackwardBitForBit) {
  const int64_t n = 3, v = 50;
  std::vector<float> logits = randomFloats(n * v, 8);
  const std::vector<int32_t> targets = {3, 0, 49};
  std::vector<float> probs = logits, losses(n);
  k::crossEntropyForward(probs.data(), losses.data(), targets.data(), n, v);
  std::vector<float> dlogits = probs;
  const float dloss = 1.0f / 3.0f;
  k::crossEntropyBackward(dlogits.data(), targets.data(), dloss, n, v);
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t j = 0; j < v; ++j) {
      EXPECT_EQ(crossEntropyGrad(probs[r * v + j], j == targets[r], dloss), dlogits[r * v + j]);
    }
  }
}

TEST(CudaMathTest, SoftmaxGradRowsSumToZero) {
  // d/dx of softmax: sum_j p_j (dp_j - p.dp) = 0 for any dp.
  const std::vector<float> x = randomFloats(64, 9), dp = randomFloats(64, 10);
  SoftmaxState s;
  for (float xi : x) s = softmaxAdd(s, xi);
  std::vector<float> p(x.size());
  float dot = 0.0f;
  for (size_t j = 0; j < x.size(); ++j) {
    p[j] = expf(x[j] - s.max) / s.sum;
    dot += p[j] * dp[j];
  }
  float total = 0.0f;
  for (size_t j = 0; j < x.size(); ++j) total += softmaxGrad(p[j], dp[j], dot);
  EXPECT_NEAR(total, 0.0f, 1e-6f);
}

}  // namespace
}  // namespace bubblescope::engine::cuda
