// Every CUDA kernel's forward and backward against the CPU kernel on random
// inputs. Backward gradients start from random values (the kernels add).
// Tolerance: fp32 1e-5 relative (cuda_test_util.h): the maths is the same,
// only reduction orders, fused multiply-adds and expf differ.
#include "engine/cuda/cuda_kernels.h"

#include <gtest/gtest.h>

#include "engine/adamw.h"
#include "engine/cpu_kernels.h"
#include "tests/gpu/cuda_test_util.h"

namespace bubblescope::engine::cuda {
namespace {

namespace k = kernels;
using testing::expectClose;
using testing::randomFloats;
using testing::randomTokens;

constexpr float kTol = 1e-5f;
// Sizes with tails: C, T and V are not multiples of 32.
constexpr int64_t B = 3, T = 67, C = 100, V = 1003, maxT = 80;
constexpr int64_t N = B * T;

class CudaKernelsTest : public testing::CudaTest {};

TEST_F(CudaKernelsTest, Embedding) {
  const auto tokens = randomTokens(N, static_cast<int32_t>(V), 1);  // (B, T), repeats
  const auto wte = randomFloats(V * C, 2), wpe = randomFloats(maxT * C, 3);
  std::vector<float> out(N * C);
  float* dOut = upload(out);
  const int32_t* dTokens = upload(tokens);
  BS_ASSERT_OK(embeddingForward(dOut, dTokens, upload(wte), upload(wpe), B, T, C, stream()));
  k::embeddingForward(out.data(), tokens.data(), wte.data(), wpe.data(), B, T, C);
  expectClose("out", download(dOut, out.size()), out, kTol);

  const auto dout = randomFloats(N * C, 4);
  auto dwte = randomFloats(V * C, 5), dwpe = randomFloats(maxT * C, 6);
  float* dDwte = upload(dwte);
  float* dDwpe = upload(dwpe);
  BS_ASSERT_OK(embeddingBackward(dDwte, dDwpe, upload(dout), dTokens, B, T, C, stream()));
  k::embeddingBackward(dwte.data(), dwpe.data(), dout.data(), tokens.data(), B, T, C);
  expectClose("dwte", download(dDwte, dwte.size()), dwte, kTol);
  // dwpe adds the rows in the CPU's order: bit for bit.
  EXPECT_EQ(download(dDwpe, dwpe.size()), dwpe);
}

TEST_F(CudaKernelsTest, LayerNorm) {
  auto x = randomFloats(N * C, 7, 2.0f);
  for (int64_t i = 0; i < N * C; ++i) x[i] += 0.01f * static_cast<float>(i / C);  // row offsets
  const auto w = randomFloats(C, 8), b = randomFloats(C, 9);
  std::vector<float> out(N * C), mean(N), rstd(N);
  float *dOut = upload(out), *dMean = upload(mean), *dRstd = upload(rstd);
  const float *dX = upload(x), *dW = upload(w);
  BS_ASSERT_OK(layerNormForward(dOut, dMean, dRstd, dX, dW, upload(b), N, C, stream()));
  k::layerNormForward(out.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), N, C);
  expectClose("out", download(dOut, out.size()), out, kTol);
  expectClose("mean", download(dMean, mean.size()), mean, kTol);
  expectClose("rstd", download(dRstd, rstd.size()), rstd, kTol);

  const auto dout = randomFloats(N * C, 10);
  auto dx = randomFloats(N * C, 11), dw = randomFloats(C, 12), db = randomFloats(C, 13);
  float *dDx = upload(dx), *dDw = upload(dw), *dDb = upload(db);
  // The GPU backward uses the GPU's statistics, as in training.
  BS_ASSERT_OK(
      layerNormBackward(dDx, dDw, dDb, upload(dout), dX, dW, dMean, dRstd, N, C, stream()));
  k::layerNormBackward(dx.data(), dw.data(), db.data(), dout.data(), x.data(), w.data(),
                       mean.data(), rstd.data(), N, C);
  expectClose("dinp", download(dDx, dx.size()), dx, kTol);
  expectClose("dweight", download(dDw, dw.size()), dw, kTol);
  expectClose("dbias", download(dDb, db.size()), db, kTol);
}

TEST_F(CudaKernelsTest, GeluAndResidual) {
  const int64_t n = N * C;
  const auto x = randomFloats(n, 14, 3.0f), y = randomFloats(n, 15), dout = randomFloats(n, 16);
  std::vector<float> out(n);
  float* dOut = upload(out);
  const float *dX = upload(x), *dY = upload(y), *dDout = upload(dout);
  BS_ASSERT_OK(geluForward(dOut, dX, n, stream()));
  k::geluForward(out.data(), x.data(), n);
  expectClose("gelu", download(dOut, n), out, kTol);

  auto dx = randomFloats(n, 17);
  float* dDx = upload(dx);
  BS_ASSERT_OK(geluBackward(dDx, dX, dDout, n, stream()));
  k::geluBackward(dx.data(), x.data(), dout.data(), n);
  expectClose("gelu dinp", download(dDx, n), dx, kTol);

  BS_ASSERT_OK(residualForward(dOut, dX, dY, n, stream()));
  k::residualForward(out.data(), x.data(), y.data(), n);
  EXPECT_EQ(download(dOut, n), out);
  auto da = randomFloats(n, 18), db = randomFloats(n, 19);
  float *dDa = upload(da), *dDb = upload(db);
  BS_ASSERT_OK(residualBackward(dDa, dDb, dDout, n, stream()));
  k::residualBackward(da.data(), db.data(), dout.data(), n);
  EXPECT_EQ(download(dDa, n), da);
  EXPECT_EQ(download(dDb, n), db);
}

TEST_F(CudaKernelsTest, CrossEntropyWithSmallAndGpt2SizedVocabularies) {
  for (const int64_t v : {V, int64_t{50257}}) {
    const int64_t n = v == V ? N : 8;
    auto logits = randomFloats(n * v, 20, 3.0f);
    const auto targets = randomTokens(n, static_cast<int32_t>(v), 21);
    std::vector<float> losses(n);
    float *dProbs = upload(logits), *dLosses = upload(losses);
    const int32_t* dTargets = upload(targets);
    BS_ASSERT_OK(crossEntropyForward(dProbs, dLosses, dTargets, n, v, stream()));
    k::crossEntropyForward(logits.data(), losses.data(), targets.data(), n, v);
    const std::string tag = " (V = " + std::to_string(v) + ")";
    expectClose("probs" + tag, download(dProbs, logits.size()), logits, kTol);
    expectClose("losses" + tag, download(dLosses, losses.size()), losses, kTol);

    const float dloss = 1.0f / static_cast<float>(n);
    BS_ASSERT_OK(crossEntropyBackward(dProbs, dTargets, dloss, n, v, stream()));
    k::crossEntropyBackward(logits.data(), targets.data(), dloss, n, v);
    expectClose("dlogits" + tag, download(dProbs, logits.size()), logits, kTol);
  }
}

TEST_F(CudaKernelsTest, AdamWMatchesTheCpuOptimizerOverSteps) {
  const int64_t n = 10007;
  AdamWConfig config;
  for (bool decay : {true, false}) {
    auto p = randomFloats(n, 22);
    std::vector<float> m(n, 0.0f), v(n, 0.0f);
    float *dP = upload(p), *dM = upload(m), *dV = upload(v);
    for (int64_t t = 1; t <= 3; ++t) {
      const auto g = randomFloats(n, 30 + static_cast<uint32_t>(t), 0.1f);
      const double lr = 1e-3;
      const AdamWScalars s =
          adamwScalars(config.beta1, config.beta2, config.eps, config.weightDecay, lr, t, decay);
      BS_ASSERT_OK(adamwUpdate(dP, upload(g), dM, dV, n, s, stream()));
      engine::adamwUpdate(p, g, m, v, config, lr, t, decay);
    }
    expectClose("param", download(dP, n), p, kTol);
    expectClose("m", download(dM, n), m, kTol);
    expectClose("v", download(dV, n), v, kTol);
  }
}

TEST_F(CudaKernelsTest, ToBf16RoundsToNearestEvenLikeTheHost) {
  const auto x = randomFloats(5000, 23, 10.0f);
  __nv_bfloat16* out = allocBf16(x.size());
  BS_ASSERT_OK(toBf16(out, upload(x), static_cast<int64_t>(x.size()), stream()));
  const std::vector<__nv_bfloat16> back = download(out, x.size());
  const std::vector<float> expected = testing::roundToBf16(x);
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(__bfloat162float(back[i]), expected[i]) << i;
}

}  // namespace
}  // namespace bubblescope::engine::cuda
