// CpuBackend against the CPU kernels called directly: every op must give the
// same bits (it forwards the same arguments), tensors must carry their
// device and be counted, and errors must be kept until the next
// synchronisation point.
#include "engine/cpu_backend.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "engine/adamw.h"
#include "engine/cpu_gemm.h"
#include "engine/cpu_kernels.h"

namespace bubblescope::engine {
namespace {

namespace k = kernels;

constexpr int64_t B = 2, T = 7, C = 12, NH = 3, V = 19, F = 4 * C, N = B * T;

std::vector<float> randoms(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

std::vector<int32_t> tokens(size_t n, int32_t v, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int32_t> dist(0, v - 1);
  std::vector<int32_t> out(n);
  for (int32_t& x : out) x = dist(gen);
  return out;
}

class CpuBackendTest : public ::testing::Test {
 protected:
  // A backend tensor holding `host`.
  Tensor put(const std::vector<float>& host, MemoryCategory c = MemoryCategory::kActivations) {
    Tensor t = be_.newTensor({static_cast<int64_t>(host.size())}, c);
    be_.upload(t, std::span<const float>(host));
    return t;
  }
  std::vector<float> get(const Tensor& t) {
    auto host = be_.download(t);
    EXPECT_TRUE(host.isOk()) << host.status().message();
    return host.isOk() ? *host : std::vector<float>{};
  }
  CpuBackend be_;
};

TEST_F(CpuBackendTest, TensorsLiveOnTheHostAndAreCounted) {
  EXPECT_EQ(be_.device(), Device::kHost);
  Tensor t = be_.newTensor({3, 5}, MemoryCategory::kGradients);
  EXPECT_EQ(t.device(), Device::kHost);
  EXPECT_EQ(be_.allocator().currentBytes(MemoryCategory::kGradients), 60);
  auto idx = be_.newIndexTensor({4}, MemoryCategory::kActivations);
  EXPECT_EQ(be_.allocator().currentBytes(MemoryCategory::kActivations), 16);
  EXPECT_EQ(Tensor::view({2}, nullptr, Device::kCuda).device(), Device::kCuda);
}

TEST_F(CpuBackendTest, MemoryOps) {
  const auto x = randoms(37, 1), y = randoms(37, 2);
  Tensor tx = put(x), ty = put(y);
  be_.axpy(ty.data(), 0.5f, tx.data(), 37);
  std::vector<float> want = y;
  for (size_t i = 0; i < want.size(); ++i) want[i] += 0.5f * x[i];
  EXPECT_EQ(get(ty), want);
  be_.scale(ty.data(), -2.0f, 37);
  for (float& w : want) w *= -2.0f;
  EXPECT_EQ(get(ty), want);
  be_.copy(ty.data(), tx.data(), tx.bytes());
  EXPECT_EQ(get(ty), x);
  be_.fill(ty.data(), 1.5f, 37);
  EXPECT_EQ(get(ty), std::vector<float>(37, 1.5f));
  be_.zero(ty);
  EXPECT_EQ(get(ty), std::vector<float>(37, 0.0f));

  // sum and squaredSum: double accumulation, as gradSquaredSum.
  double s = 0.0, s2 = 0.0;
  for (float v : x) s += v;
  Parameter p("p", {37}, InitKind::kZeros, 0.0, false, nullptr);
  p.grad.copyFrom(x);
  s2 = gradSquaredSum({&p});
  EXPECT_EQ(*be_.sum(tx.data(), 37), s);
  EXPECT_EQ(*be_.squaredSum(tx.data(), 37), s2);
}

TEST_F(CpuBackendTest, ErrorsWaitForTheNextSynchronisation) {
  Tensor t = be_.newTensor({4}, MemoryCategory::kOther);
  be_.fill(t.data(), 1.0f, -1);  // kept, nothing written
  be_.fill(t.data(), 2.0f, 4);   // later ops still run
  const Status s = be_.synchronize();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("fill: negative size -1"), std::string::npos) << s.message();
  EXPECT_TRUE(be_.synchronize().isOk());  // forgotten once returned
  EXPECT_EQ(get(t), std::vector<float>(4, 2.0f));

  const std::vector<float> three(3, 1.0f);
  be_.upload(t, std::span<const float>(three));
  auto host = be_.download(t);
  ASSERT_FALSE(host.isOk());
  EXPECT_NE(host.status().message().find("upload of 3 elements into a tensor of (4)"),
            std::string::npos)
      << host.status().message();
  EXPECT_FALSE(be_.sum(t.data(), -2).isOk());
}

TEST_F(CpuBackendTest, GemmAndLinear) {
  const auto a = randoms(N * C, 3), w = randoms(F * C, 4), bias = randoms(F, 5);
  Tensor ta = put(a), tw = put(w), tb = put(bias);
  Tensor out = be_.newTensor({N, F}, MemoryCategory::kActivations);
  be_.linearForward(out.data(), ta.data(), tw.data(), tb.data(), N, C, F);
  std::vector<float> want(N * F);
  k::linearForward(want.data(), a.data(), w.data(), bias.data(), N, C, F);
  EXPECT_EQ(get(out), want);

  const auto dout = randoms(N * F, 6), dinp0 = randoms(N * C, 7), dw0 = randoms(F * C, 8),
             db0 = randoms(F, 9);
  Tensor tdout = put(dout), tdinp = put(dinp0), tdw = put(dw0), tdb = put(db0);
  be_.linearBackwardInput(tdinp.data(), tdout.data(), tw.data(), N, C, F);
  be_.linearBackwardWeight(tdw.data(), tdb.data(), tdout.data(), ta.data(), N, C, F);
  auto dinp = dinp0, dw = dw0, db = db0;
  k::linearBackwardInput(dinp.data(), dout.data(), w.data(), N, C, F);
  k::linearBackwardWeight(dw.data(), db.data(), dout.data(), a.data(), N, C, F);
  EXPECT_EQ(get(tdinp), dinp);
  EXPECT_EQ(get(tdw), dw);
  EXPECT_EQ(get(tdb), db);

  auto c = randoms(N * N, 10);
  Tensor tc = put(c);
  be_.gemm(false, true, N, N, C, 0.5f, ta.data(), C, ta.data(), C, 2.0f, tc.data(), N);
  gemm<float>(false, true, N, N, C, 0.5f, a.data(), C, a.data(), C, 2.0f, c.data(), N);
  EXPECT_EQ(get(tc), c);
}

TEST_F(CpuBackendTest, LayerNorm) {
  const auto x = randoms(N * C, 11, 2.0f), w = randoms(C, 12), b = randoms(C, 13);
  Tensor tx = put(x), tw = put(w), tb = put(b);
  Tensor out = be_.newTensor({N, C}, MemoryCategory::kActivations);
  Tensor mean = be_.newTensor({N}, MemoryCategory::kActivations);
  Tensor rstd = be_.newTensor({N}, MemoryCategory::kActivations);
  be_.layerNormForward(out.data(), mean.data(), rstd.data(), tx.data(), tw.data(), tb.data(), N, C);
  std::vector<float> o(N * C), m(N), r(N);
  k::layerNormForward(o.data(), m.data(), r.data(), x.data(), w.data(), b.data(), N, C);
  EXPECT_EQ(get(out), o);
  EXPECT_EQ(get(mean), m);
  EXPECT_EQ(get(rstd), r);

  const auto dout = randoms(N * C, 14);
  auto dx = randoms(N * C, 15), dw = randoms(C, 16), db = randoms(C, 17);
  Tensor tdout = put(dout), tdx = put(dx), tdw = put(dw), tdb = put(db);
  be_.layerNormBackward(tdx.data(), tdw.data(), tdb.data(), tdout.data(), tx.data(), tw.data(),
                        mean.data(), rstd.data(), N, C);
  k::layerNormBackward(dx.data(), dw.data(), db.data(), dout.data(), x.data(), w.data(), m.data(),
                       r.data(), N, C);
  EXPECT_EQ(get(tdx), dx);
  EXPECT_EQ(get(tdw), dw);
  EXPECT_EQ(get(tdb), db);

  // The zero-bubble halves.
  be_.layerNormBackwardInput(tdx.data(), tdout.data(), tx.data(), tw.data(), mean.data(),
                             rstd.data(), N, C);
  be_.layerNormBackwardWeight(tdw.data(), tdb.data(), tdout.data(), tx.data(), mean.data(),
                              rstd.data(), N, C);
  k::layerNormBackwardInput(dx.data(), dout.data(), x.data(), w.data(), m.data(), r.data(), N, C);
  k::layerNormBackwardWeight(dw.data(), db.data(), dout.data(), x.data(), m.data(), r.data(), N, C);
  EXPECT_EQ(get(tdx), dx);
  EXPECT_EQ(get(tdw), dw);
  EXPECT_EQ(get(tdb), db);
}

TEST_F(CpuBackendTest, Attention) {
  const auto qkv = randoms(N * 3 * C, 18);
  Tensor tqkv = put(qkv);
  Tensor out = be_.newTensor({B, T, C}, MemoryCategory::kActivations);
  Tensor att = be_.newTensor({B, NH, T, T}, MemoryCategory::kActivations);
  be_.attentionForward(out.data(), att.data(), tqkv.data(), B, T, C, NH);
  std::vector<float> o(N * C), a(B * NH * T * T);
  k::attentionForward(o.data(), a.data(), qkv.data(), B, T, C, NH);
  EXPECT_EQ(get(out), o);
  EXPECT_EQ(get(att), a);

  EXPECT_EQ(be_.attentionScratchShape(T, NH), (Shape{T, T}));
  const auto dout = randoms(N * C, 19);
  auto dqkv = randoms(N * 3 * C, 20);
  Tensor tdout = put(dout), tdqkv = put(dqkv);
  Tensor scratch = be_.newTensor(be_.attentionScratchShape(T, NH), MemoryCategory::kActivations);
  be_.attentionBackward(tdqkv.data(), scratch.data(), tdout.data(), tqkv.data(), att.data(), B, T,
                        C, NH);
  std::vector<float> s(T * T);
  k::attentionBackward(dqkv.data(), s.data(), dout.data(), qkv.data(), a.data(), B, T, C, NH);
  EXPECT_EQ(get(tdqkv), dqkv);
}

TEST_F(CpuBackendTest, Pointwise) {
  const auto x = randoms(N * F, 21), y = randoms(N * F, 22), dout = randoms(N * F, 23);
  Tensor tx = put(x), ty = put(y), tdout = put(dout);
  Tensor out = be_.newTensor({N * F}, MemoryCategory::kActivations);
  be_.geluForward(out.data(), tx.data(), N * F);
  std::vector<float> o(N * F);
  k::geluForward(o.data(), x.data(), N * F);
  EXPECT_EQ(get(out), o);
  auto dx = y;
  Tensor tdx = put(dx);
  be_.geluBackward(tdx.data(), tx.data(), tdout.data(), N * F);
  k::geluBackward(dx.data(), x.data(), dout.data(), N * F);
  EXPECT_EQ(get(tdx), dx);

  be_.residualForward(out.data(), tx.data(), ty.data(), N * F);
  k::residualForward(o.data(), x.data(), y.data(), N * F);
  EXPECT_EQ(get(out), o);
  auto da = x, db = y;
  Tensor tda = put(da), tdb = put(db);
  be_.residualBackward(tda.data(), tdb.data(), tdout.data(), N * F);
  k::residualBackward(da.data(), db.data(), dout.data(), N * F);
  EXPECT_EQ(get(tda), da);
  EXPECT_EQ(get(tdb), db);
}

TEST_F(CpuBackendTest, EmbeddingAndCrossEntropy) {
  const auto tok = tokens(N, V, 24);
  auto ttok = be_.newIndexTensor({B, T}, MemoryCategory::kActivations);
  be_.upload(ttok, std::span<const int32_t>(tok));
  const auto wte = randoms(V * C, 25), wpe = randoms(T * C, 26);
  Tensor twte = put(wte), twpe = put(wpe);
  Tensor out = be_.newTensor({B, T, C}, MemoryCategory::kActivations);
  be_.embeddingForward(out.data(), ttok.data(), twte.data(), twpe.data(), B, T, C);
  std::vector<float> o(N * C);
  k::embeddingForward(o.data(), tok.data(), wte.data(), wpe.data(), B, T, C);
  EXPECT_EQ(get(out), o);
  const auto dout = randoms(N * C, 27);
  auto dwte = randoms(V * C, 28), dwpe = randoms(T * C, 29);
  Tensor tdout = put(dout), tdwte = put(dwte), tdwpe = put(dwpe);
  be_.embeddingBackward(tdwte.data(), tdwpe.data(), tdout.data(), ttok.data(), B, T, C);
  k::embeddingBackward(dwte.data(), dwpe.data(), dout.data(), tok.data(), B, T, C);
  EXPECT_EQ(get(tdwte), dwte);
  EXPECT_EQ(get(tdwpe), dwpe);

  auto logits = randoms(N * V, 30, 3.0f);
  Tensor tprobs = put(logits);
  Tensor losses = be_.newTensor({N}, MemoryCategory::kActivations);
  be_.crossEntropyForward(tprobs.data(), losses.data(), ttok.data(), N, V);
  std::vector<float> l(N);
  k::crossEntropyForward(logits.data(), l.data(), tok.data(), N, V);
  EXPECT_EQ(get(tprobs), logits);
  EXPECT_EQ(get(losses), l);
  be_.crossEntropyBackward(tprobs.data(), ttok.data(), 1.0f / N, N, V);
  k::crossEntropyBackward(logits.data(), tok.data(), 1.0f / N, N, V);
  EXPECT_EQ(get(tprobs), logits);
}

TEST_F(CpuBackendTest, AdamW) {
  const AdamWConfig config;
  auto p = randoms(50, 31), g = randoms(50, 32), m = randoms(50, 33, 0.1f), v = randoms(50, 34);
  for (float& x : v) x = x * x;
  Tensor tp = put(p), tg = put(g), tm = put(m), tv = put(v);
  for (int64_t t = 1; t <= 3; ++t) {
    be_.adamwUpdate(tp.data(), tg.data(), tm.data(), tv.data(), 50, config, 1e-2, t, true);
    adamwUpdate(p, g, m, v, config, 1e-2, t, true);
  }
  EXPECT_EQ(get(tp), p);
  EXPECT_EQ(get(tm), m);
  EXPECT_EQ(get(tv), v);
}

}  // namespace
}  // namespace bubblescope::engine
