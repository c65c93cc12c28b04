// Finite-difference checks of every CPU kernel's backward, in double.
// Each loss is L = sum(out * R) for a fixed random R, so dL/dout = R.
#include <gtest/gtest.h>

#include <numeric>

#include "engine/cpu_kernels.h"
#include "tests/engine/grad_check.h"

namespace bubblescope::engine {
namespace {

using testing::expectGradientsMatch;
using testing::randomVector;
namespace k = kernels;

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  return std::inner_product(a.begin(), a.end(), b.begin(), 0.0);
}

TEST(KernelGradTest, Embedding) {
  const int64_t B = 2, T = 3, C = 4, V = 5, maxT = 4;
  const std::vector<int32_t> tokens = {1, 4, 1, 0, 3, 3};  // (B, T), repeats on purpose
  auto wte = randomVector(V * C, 1), wpe = randomVector(maxT * C, 2);
  const auto r = randomVector(B * T * C, 3);
  std::vector<double> out(B * T * C);
  auto loss = [&] {
    k::embeddingForward(out.data(), tokens.data(), wte.data(), wpe.data(), B, T, C);
    return dot(out, r);
  };
  std::vector<double> dwte(V * C, 0.0), dwpe(maxT * C, 0.0);
  k::embeddingBackward(dwte.data(), dwpe.data(), r.data(), tokens.data(), B, T, C);
  expectGradientsMatch("dwte", loss, wte.data(), dwte.data(), wte.size());
  expectGradientsMatch("dwpe", loss, wpe.data(), dwpe.data(), wpe.size());
}

TEST(KernelGradTest, LayerNorm) {
  const int64_t N = 5, C = 7;
  auto x = randomVector(N * C, 4, 2.0), w = randomVector(C, 5), b = randomVector(C, 6);
  for (int64_t i = 0; i < N * C; ++i) x[i] += 0.5 * (i % C);  // nonzero means
  const auto r = randomVector(N * C, 7);
  std::vector<double> out(N * C), mean(N), rstd(N);
  auto loss = [&] {
    k::layerNormForward(out.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), N, C);
    return dot(out, r);
  };
  loss();
  std::vector<double> dx(N * C, 0.0), dw(C, 0.0), db(C, 0.0);
  k::layerNormBackward(dx.data(), dw.data(), db.data(), r.data(), x.data(), w.data(), mean.data(),
                       rstd.data(), N, C);
  expectGradientsMatch("dx", loss, x.data(), dx.data(), x.size());
  expectGradientsMatch("dweight", loss, w.data(), dw.data(), w.size());
  expectGradientsMatch("dbias", loss, b.data(), db.data(), b.size());
}

// The zero-bubble halves: bit-identical to the fused kernel's parts, and each
// matches the finite differences on its own.
TEST(KernelGradTest, LayerNormSplitsIntoInputAndWeightHalves) {
  const int64_t N = 5, C = 7;
  auto x = randomVector(N * C, 14, 2.0), w = randomVector(C, 15), b = randomVector(C, 16);
  for (int64_t i = 0; i < N * C; ++i) x[i] += 0.3 * (i % C);
  const auto r = randomVector(N * C, 17);
  std::vector<double> out(N * C), mean(N), rstd(N);
  auto loss = [&] {
    k::layerNormForward(out.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), N, C);
    return dot(out, r);
  };
  loss();
  // Start from nonzero gradients: every kernel adds.
  const auto dx0 = randomVector(N * C, 18), dw0 = randomVector(C, 19), db0 = randomVector(C, 20);
  std::vector<double> dx = dx0, dw = dw0, db = db0;
  k::layerNormBackward(dx.data(), dw.data(), db.data(), r.data(), x.data(), w.data(), mean.data(),
                       rstd.data(), N, C);
  std::vector<double> dxB = dx0, dwW = dw0, dbW = db0;
  k::layerNormBackwardInput(dxB.data(), r.data(), x.data(), w.data(), mean.data(), rstd.data(), N,
                            C);
  k::layerNormBackwardWeight(dwW.data(), dbW.data(), r.data(), x.data(), mean.data(), rstd.data(),
                             N, C);
  EXPECT_EQ(dxB, dx);
  EXPECT_EQ(dwW, dw);
  EXPECT_EQ(dbW, db);
  // The same kernels in float agree with the fused float kernel bit for bit.
  std::vector<float> xf(x.begin(), x.end()), wf(w.begin(), w.end()), rf(r.begin(), r.end());
  std::vector<float> of(N * C), mf(N), sf(N), bf(b.begin(), b.end());
  k::layerNormForward(of.data(), mf.data(), sf.data(), xf.data(), wf.data(), bf.data(), N, C);
  std::vector<float> fx(N * C, 0.5f), fw(C, 0.25f), fb(C, -1.0f);
  std::vector<float> gx = fx, gw = fw, gb = fb;
  k::layerNormBackward(fx.data(), fw.data(), fb.data(), rf.data(), xf.data(), wf.data(), mf.data(),
                       sf.data(), N, C);
  k::layerNormBackwardInput(gx.data(), rf.data(), xf.data(), wf.data(), mf.data(), sf.data(), N, C);
  k::layerNormBackwardWeight(gw.data(), gb.data(), rf.data(), xf.data(), mf.data(), sf.data(), N,
                             C);
  EXPECT_EQ(gx, fx);
  EXPECT_EQ(gw, fw);
  EXPECT_EQ(gb, fb);
  // Against finite differences, from zero.
  std::vector<double> ix(N * C, 0.0), iw(C, 0.0), ib(C, 0.0);
  k::layerNormBackwardInput(ix.data(), r.data(), x.data(), w.data(), mean.data(), rstd.data(), N,
                            C);
  k::layerNormBackwardWeight(iw.data(), ib.data(), r.data(), x.data(), mean.data(), rstd.data(), N,
                             C);
  expectGradientsMatch("dx (B half)", loss, x.data(), ix.data(), x.size());
  expectGradientsMatch("dweight (W half)", loss, w.data(), iw.data(), w.size());
  expectGradientsMatch("dbias (W half)", loss, b.data(), ib.data(), b.size());
}

TEST(KernelGradTest, LinearWithAndWithoutBias) {
  const int64_t N = 6, IC = 5, OC = 3;  // OC != IC so a transposed index breaks
  auto x = randomVector(N * IC, 8), w = randomVector(OC * IC, 9), b = randomVector(OC, 10);
  const auto r = randomVector(N * OC, 11);
  std::vector<double> out(N * OC);
  for (bool withBias : {true, false}) {
    auto loss = [&] {
      k::linearForward(out.data(), x.data(), w.data(), withBias ? b.data() : nullptr, N, IC, OC);
      return dot(out, r);
    };
    std::vector<double> dx(N * IC, 0.0), dw(OC * IC, 0.0), db(OC, 0.0);
    k::linearBackwardInput(dx.data(), r.data(), w.data(), N, IC, OC);
    k::linearBackwardWeight(dw.data(), withBias ? db.data() : nullptr, r.data(), x.data(), N, IC,
                            OC);
    expectGradientsMatch("dinp", loss, x.data(), dx.data(), x.size());
    expectGradientsMatch("dweight", loss, w.data(), dw.data(), w.size());
    if (withBias) expectGradientsMatch("dbias", loss, b.data(), db.data(), b.size());
  }
}

TEST(KernelGradTest, CausalAttention) {
  const int64_t B = 2, T = 5, C = 6, NH = 2;
  auto qkv = randomVector(B * T * 3 * C, 12);
  const auto r = randomVector(B * T * C, 13);
  std::vector<double> out(B * T * C), att(B * NH * T * T);
  auto loss = [&] {
    k::attentionForward(out.data(), att.data(), qkv.data(), B, T, C, NH);
    return dot(out, r);
  };
  loss();
  std::vector<double> dqkv(qkv.size(), 0.0), scratch(T * T);
  k::attentionBackward(dqkv.data(), scratch.data(), r.data(), qkv.data(), att.data(), B, T, C, NH);
  expectGradientsMatch("dqkv", loss, qkv.data(), dqkv.data(), qkv.size());
}

TEST(KernelGradTest, AttentionIsCausal) {
  // The output at time t must not change when a later token's k or v changes.
  const int64_t B = 1, T = 4, C = 4, NH = 2;
  auto qkv = randomVector(B * T * 3 * C, 14);
  std::vector<double> out(B * T * C), out2(B * T * C), att(B * NH * T * T);
  k::attentionForward(out.data(), att.data(), qkv.data(), B, T, C, NH);
  for (int64_t i = C; i < 3 * C; ++i) qkv[(T - 1) * 3 * C + i] += 1.0;  // last step's k, v
  k::attentionForward(out2.data(), att.data(), qkv.data(), B, T, C, NH);
  for (int64_t i = 0; i < (T - 1) * C; ++i) EXPECT_EQ(out[i], out2[i]) << i;
  EXPECT_NE(out[(T - 1) * C], out2[(T - 1) * C]);
}

TEST(KernelGradTest, Gelu) {
  const int64_t n = 40;
  auto x = randomVector(n, 15, 2.0);
  const auto r = randomVector(n, 16);
  std::vector<double> out(n);
  auto loss = [&] {
    k::geluForward(out.data(), x.data(), n);
    return dot(out, r);
  };
  std::vector<double> dx(n, 0.0);
  k::geluBackward(dx.data(), x.data(), r.data(), n);
  expectGradientsMatch("dx", loss, x.data(), dx.data(), n);
}

TEST(KernelGradTest, Residual) {
  const int64_t n = 10;
  auto a = randomVector(n, 17), b = randomVector(n, 18);
  const auto r = randomVector(n, 19);
  std::vector<double> out(n);
  auto loss = [&] {
    k::residualForward(out.data(), a.data(), b.data(), n);
    return dot(out, r);
  };
  std::vector<double> da(n, 0.0), db(n, 0.0);
  k::residualBackward(da.data(), db.data(), r.data(), n);
  expectGradientsMatch("da", loss, a.data(), da.data(), n);
  expectGradientsMatch("db", loss, b.data(), db.data(), n);
}

TEST(KernelGradTest, SoftmaxCrossEntropy) {
  const int64_t N = 4, V = 7;
  auto logits = randomVector(N * V, 20, 3.0);
  const std::vector<int32_t> targets = {0, 6, 3, 3};
  const double scale = 0.37;  // loss = scale * mean(losses)
  std::vector<double> probs(N * V), losses(N);
  auto loss = [&] {
    probs = logits;
    k::crossEntropyForward(probs.data(), losses.data(), targets.data(), N, V);
    return scale * std::accumulate(losses.begin(), losses.end(), 0.0) / N;
  };
  loss();
  for (int64_t r = 0; r < N; ++r) {
    double sum = 0.0;
    for (int64_t j = 0; j < V; ++j) sum += probs[r * V + j];
    EXPECT_NEAR(sum, 1.0, 1e-12);
    EXPECT_NEAR(losses[r], -std::log(probs[r * V + targets[r]]), 1e-12);
  }
  std::vector<double> dlogits = probs;
  k::crossEntropyBackward(dlogits.data(), targets.data(), scale / N, N, V);
  expectGradientsMatch("dlogits", loss, logits.data(), dlogits.data(), logits.size());
}

TEST(KernelGradTest, FloatKernelsAgreeWithDouble) {
  // The fp32 instantiation runs the same code: spot-check attention.
  const int64_t B = 1, T = 6, C = 8, NH = 2;
  const auto qkvD = randomVector(B * T * 3 * C, 21);
  std::vector<float> qkvF(qkvD.begin(), qkvD.end());
  std::vector<double> outD(B * T * C), attD(B * NH * T * T);
  std::vector<float> outF(B * T * C), attF(B * NH * T * T);
  k::attentionForward(outD.data(), attD.data(), qkvD.data(), B, T, C, NH);
  k::attentionForward(outF.data(), attF.data(), qkvF.data(), B, T, C, NH);
  for (size_t i = 0; i < outD.size(); ++i) EXPECT_NEAR(outF[i], outD[i], 1e-5);
}

TEST(KernelGradTest, FloatGeluMatchesTheTanhReference) {
  // fp32 uses a faster tanh than the double reference; both must agree.
  const int64_t n = 2001;
  std::vector<double> xD(n), outD(n), dD(n, 0.0), ones(n, 1.0);
  for (int64_t i = 0; i < n; ++i) xD[i] = -10.0 + 0.01 * i;
  std::vector<float> xF(xD.begin(), xD.end()), outF(n), dF(n, 0.0f), onesF(n, 1.0f);
  k::geluForward(outD.data(), xD.data(), n);
  k::geluForward(outF.data(), xF.data(), n);
  k::geluBackward(dD.data(), xD.data(), ones.data(), n);
  k::geluBackward(dF.data(), xF.data(), onesF.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_NEAR(outF[i], outD[i], 2e-6 * (1 + std::abs(xD[i]))) << xD[i];
    EXPECT_NEAR(dF[i], dD[i], 2e-6 * (1 + std::abs(xD[i]))) << xD[i];
  }
}

}  // namespace
}  // namespace bubblescope::engine
