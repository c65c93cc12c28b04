// CudaBackend against CpuBackend: every op, forward and backward, on the same
// random inputs, through the Backend interface only (as the model will call
// it). Tolerance: fp32 1e-5 relative (cuda_test_util.h's formula); sums in
// double 1e-12. Skips without a GPU, except the "no GPU" case.
#include "engine/cuda/cuda_backend.h"

#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <utility>

#include "engine/cpu_backend.h"
#include "tests/gpu/cuda_test_util.h"

namespace bubblescope::engine::cuda {
namespace {

using testing::expectClose;
using testing::randomFloats;
using testing::randomTokens;

constexpr float kTol = 1e-5f;
// Sizes with tails: none of C, T, V, F is a multiple of 32.
constexpr int64_t B = 3, T = 37, C = 60, NH = 4, V = 1003, F = 4 * C, N = B * T;

TEST(CudaBackendNoGpu, CreateFailsWithAStatus) {
  if (haveGpu()) GTEST_SKIP() << "a GPU is present";
  auto backend = CudaBackend::create(0);
  ASSERT_FALSE(backend.isOk());
  EXPECT_EQ(backend.status().code(), StatusCode::kFailedPrecondition) << backend.status().message();
}

// One tensor on each backend, holding the same values.
struct Pair {
  Tensor cpu;
  Tensor gpu;
};

class CudaBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!haveGpu()) GTEST_SKIP() << "no GPU";
    auto b = CudaBackend::create(0);
    ASSERT_TRUE(b.isOk()) << b.status().message();
    gpu_ = std::move(*b);
  }
  void TearDown() override {
    if (gpu_) {
      EXPECT_TRUE(gpu_->synchronize().isOk());
    }
    pairs_.clear();  // device tensors before the backend
  }

  Pair& put(const std::vector<float>& host) {
    const Shape shape{static_cast<int64_t>(host.size())};
    Pair p{cpu_.newTensor(shape, MemoryCategory::kActivations),
           gpu_->newTensor(shape, MemoryCategory::kActivations)};
    cpu_.upload(p.cpu, std::span<const float>(host));
    gpu_->upload(p.gpu, std::span<const float>(host));
    pairs_.push_back(std::move(p));
    return pairs_.back();
  }
  Pair& zeros(int64_t n) { return put(std::vector<float>(static_cast<size_t>(n))); }
  std::pair<TensorT<int32_t>, TensorT<int32_t>> ids(const std::vector<int32_t>& host) {
    const Shape shape{static_cast<int64_t>(host.size())};
    auto c = cpu_.newIndexTensor(shape, MemoryCategory::kActivations);
    auto g = gpu_->newIndexTensor(shape, MemoryCategory::kActivations);
    cpu_.upload(c, std::span<const int32_t>(host));
    gpu_->upload(g, std::span<const int32_t>(host));
    return {std::move(c), std::move(g)};
  }
  // The GPU's values against the CPU's.
  void expectSame(const std::string& what, const Pair& p, float tol = kTol) {
    auto c = cpu_.download(p.cpu);
    auto g = gpu_->download(p.gpu);
    ASSERT_TRUE(c.isOk()) << c.status().message();
    ASSERT_TRUE(g.isOk()) << g.status().message();
    expectClose(what, *g, *c, tol);
  }

  CpuBackend cpu_;
  std::unique_ptr<CudaBackend> gpu_;
  std::deque<Pair> pairs_;
};

TEST_F(CudaBackendTest, TensorsLiveOnTheDeviceAndAreCounted) {
  EXPECT_EQ(gpu_->device(), Device::kCuda);
  EXPECT_NE(gpu_->description().find("cuda:0"), std::string::npos);
  const int64_t before = gpu_->allocator().currentBytes(MemoryCategory::kGradients);
  {
    Tensor t = gpu_->newTensor({100, 3}, MemoryCategory::kGradients);
    EXPECT_EQ(t.device(), Device::kCuda);
    EXPECT_EQ(gpu_->allocator().currentBytes(MemoryCategory::kGradients), before + 1200);
    cudaPointerAttributes attr{};
    ASSERT_EQ(cudaPointerGetAttributes(&attr, t.data()), cudaSuccess);
    EXPECT_EQ(attr.type, cudaMemoryTypeDevice);
    auto host = gpu_->download(t);  // zero-filled
    ASSERT_TRUE(host.isOk());
    EXPECT_EQ(*host, std::vector<float>(300, 0.0f));
  }
  EXPECT_EQ(gpu_->allocator().currentBytes(MemoryCategory::kGradients), before);
}

TEST_F(CudaBackendTest, MemoryOpsAndSums) {
  const int64_t n = 100003;
  const auto x = randomFloats(n, 1), y = randomFloats(n, 2);
  Pair &px = put(x), &py = put(y);
  for (Backend* be : {static_cast<Backend*>(&cpu_), static_cast<Backend*>(gpu_.get())}) {
    Tensor& tx = be == &cpu_ ? px.cpu : px.gpu;
    Tensor& ty = be == &cpu_ ? py.cpu : py.gpu;
    be->axpy(ty.data(), 0.25f, tx.data(), n);
    be->scale(ty.data(), -3.0f, n);
  }
  expectSame("axpy, scale", py);
  for (const bool squares : {false, true}) {
    auto c = squares ? cpu_.squaredSum(px.cpu.data(), n) : cpu_.sum(px.cpu.data(), n);
    auto g = squares ? gpu_->squaredSum(px.gpu.data(), n) : gpu_->sum(px.gpu.data(), n);
    ASSERT_TRUE(c.isOk() && g.isOk());
    EXPECT_NEAR(*g, *c, 1e-12 * std::abs(*c) + 1e-12) << (squares ? "squaredSum" : "sum");
  }
  gpu_->copy(py.gpu.data(), px.gpu.data(), px.gpu.bytes());
  EXPECT_EQ(*gpu_->download(py.gpu), x);
  gpu_->fill(py.gpu.data(), 0.75f, n);
  EXPECT_EQ(*gpu_->download(py.gpu), std::vector<float>(n, 0.75f));
  gpu_->zero(py.gpu);
  EXPECT_EQ(*gpu_->download(py.gpu), std::vector<float>(n, 0.0f));
}

TEST_F(CudaBackendTest, ErrorsWaitForTheNextSynchronisation) {
  Tensor t = gpu_->newTensor({4}, MemoryCategory::kOther);
  const std::vector<float> three(3, 1.0f);
  gpu_->upload(t, std::span<const float>(three));
  gpu_->fill(t.data(), 2.0f, 4);
  const Status s = gpu_->synchronize();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.message();
  EXPECT_TRUE(gpu_->synchronize().isOk());
  EXPECT_EQ(*gpu_->download(t), std::vector<float>(4, 2.0f));
}

TEST_F(CudaBackendTest, GemmAndLinear) {
  const auto a = randomFloats(N * C, 3), w = randomFloats(F * C, 4), bias = randomFloats(F, 5);
  Pair &pa = put(a), &pw = put(w), &pb = put(bias), &out = zeros(N * F);
  cpu_.linearForward(out.cpu.data(), pa.cpu.data(), pw.cpu.data(), pb.cpu.data(), N, C, F);
  gpu_->linearForward(out.gpu.data(), pa.gpu.data(), pw.gpu.data(), pb.gpu.data(), N, C, F);
  expectSame("linear out", out);

  Pair &dout = put(randomFloats(N * F, 6)), &dinp = put(randomFloats(N * C, 7)),
       &dw = put(randomFloats(F * C, 8)), &db = put(randomFloats(F, 9));
  cpu_.linearBackwardInput(dinp.cpu.data(), dout.cpu.data(), pw.cpu.data(), N, C, F);
  gpu_->linearBackwardInput(dinp.gpu.data(), dout.gpu.data(), pw.gpu.data(), N, C, F);
  cpu_.linearBackwardWeight(dw.cpu.data(), db.cpu.data(), dout.cpu.data(), pa.cpu.data(), N, C, F);
  gpu_->linearBackwardWeight(dw.gpu.data(), db.gpu.data(), dout.gpu.data(), pa.gpu.data(), N, C, F);
  expectSame("linear dinp", dinp);
  expectSame("linear dweight", dw);
  expectSame("linear dbias", db);

  Pair& c = put(randomFloats(N * N, 10));
  cpu_.gemm(false, true, N, N, C, 0.5f, pa.cpu.data(), C, pa.cpu.data(), C, 2.0f, c.cpu.data(), N);
  gpu_->gemm(false, true, N, N, C, 0.5f, pa.gpu.data(), C, pa.gpu.data(), C, 2.0f, c.gpu.data(), N);
  expectSame("gemm", c);
}

// The bf16 linear layers: against the CPU on the same bf16-rounded operands
// (fp32 accumulation on both: 1e-4, as cuda_linear_attention_test.cpp); the
// bias gradient from fp32 dout (1e-5). The operands live in tensors of the
// fp32 backend: synchronised before and after, since the streams differ.
TEST_F(CudaBackendTest, Bf16LinearLayersRoundOperandsAndAccumulateInFp32) {
  auto made = CudaBackend::create(0, MatmulPrecision::kBf16);
  ASSERT_TRUE(made.isOk()) << made.status().message();
  CudaBackend& bf = **made;
  EXPECT_EQ(bf.precision(), MatmulPrecision::kBf16);
  const auto a = randomFloats(N * C, 40), w = randomFloats(F * C, 41), bias = randomFloats(F, 42),
             dout = randomFloats(N * F, 43);
  const auto ar = testing::roundToBf16(a), wr = testing::roundToBf16(w),
             doutr = testing::roundToBf16(dout);
  // GPU: fp32 operands, rounded inside. CPU: the rounded operands.
  Pair &pa = put(a), &pw = put(w), &pb = put(bias), &pdout = put(dout);
  Pair &par = put(ar), &pwr = put(wr), &pdoutr = put(doutr);
  Pair &out = zeros(N * F), &dinp = put(randomFloats(N * C, 44)),
       &dw = put(randomFloats(F * C, 45)), &db = put(randomFloats(F, 46));
  const int64_t before = bf.allocator().currentBytes(MemoryCategory::kActivations);
  ASSERT_TRUE(gpu_->synchronize().isOk());
  bf.linearForward(out.gpu.data(), pa.gpu.data(), pw.gpu.data(), pb.gpu.data(), N, C, F);
  bf.linearBackwardInput(dinp.gpu.data(), pdout.gpu.data(), pw.gpu.data(), N, C, F);
  bf.linearBackwardWeight(dw.gpu.data(), db.gpu.data(), pdout.gpu.data(), pa.gpu.data(), N, C, F);
  ASSERT_TRUE(bf.synchronize().isOk());
  EXPECT_GE(bf.allocator().currentBytes(MemoryCategory::kActivations) - before,
            static_cast<int64_t>((N * F + F * C) * 2));  // the bf16 scratch is counted
  cpu_.linearForward(out.cpu.data(), par.cpu.data(), pwr.cpu.data(), pb.cpu.data(), N, C, F);
  cpu_.linearBackwardInput(dinp.cpu.data(), pdoutr.cpu.data(), pwr.cpu.data(), N, C, F);
  cpu_.linearBackwardWeight(dw.cpu.data(), nullptr, pdoutr.cpu.data(), par.cpu.data(), N, C, F);
  auto dbWant = *cpu_.download(db.cpu);  // the starting values, plus fp32 column sums:
  for (int64_t i = 0; i < N; ++i) {
    for (int64_t j = 0; j < F; ++j) dbWant[j] += dout[i * F + j];
  }
  expectSame("bf16 linear out", out, 1e-4f);
  expectSame("bf16 linear dinp", dinp, 1e-4f);
  expectSame("bf16 linear dweight", dw, 1e-4f);
  expectClose("bf16 linear dbias (fp32 dout)", *gpu_->download(db.gpu), dbWant, kTol);
}

TEST_F(CudaBackendTest, LayerNorm) {
  Pair &x = put(randomFloats(N * C, 11, 2.0f)), &w = put(randomFloats(C, 12)),
       &b = put(randomFloats(C, 13));
  Pair &out = zeros(N * C), &mean = zeros(N), &rstd = zeros(N);
  cpu_.layerNormForward(out.cpu.data(), mean.cpu.data(), rstd.cpu.data(), x.cpu.data(),
                        w.cpu.data(), b.cpu.data(), N, C);
  gpu_->layerNormForward(out.gpu.data(), mean.gpu.data(), rstd.gpu.data(), x.gpu.data(),
                         w.gpu.data(), b.gpu.data(), N, C);
  expectSame("ln out", out);
  expectSame("ln mean", mean);
  expectSame("ln rstd", rstd);
  Pair &dout = put(randomFloats(N * C, 14)), &dx = put(randomFloats(N * C, 15)),
       &dw = put(randomFloats(C, 16)), &db = put(randomFloats(C, 17));
  cpu_.layerNormBackward(dx.cpu.data(), dw.cpu.data(), db.cpu.data(), dout.cpu.data(), x.cpu.data(),
                         w.cpu.data(), mean.cpu.data(), rstd.cpu.data(), N, C);
  gpu_->layerNormBackward(dx.gpu.data(), dw.gpu.data(), db.gpu.data(), dout.gpu.data(),
                          x.gpu.data(), w.gpu.data(), mean.gpu.data(), rstd.gpu.data(), N, C);
  expectSame("ln dinp", dx);
  expectSame("ln dweight", dw);
  expectSame("ln dbias", db);
  // The zero-bubble halves, adding onto the same gradients.
  cpu_.layerNormBackwardInput(dx.cpu.data(), dout.cpu.data(), x.cpu.data(), w.cpu.data(),
                              mean.cpu.data(), rstd.cpu.data(), N, C);
  gpu_->layerNormBackwardInput(dx.gpu.data(), dout.gpu.data(), x.gpu.data(), w.gpu.data(),
                               mean.gpu.data(), rstd.gpu.data(), N, C);
  cpu_.layerNormBackwardWeight(dw.cpu.data(), db.cpu.data(), dout.cpu.data(), x.cpu.data(),
                               mean.cpu.data(), rstd.cpu.data(), N, C);
  gpu_->layerNormBackwardWeight(dw.gpu.data(), db.gpu.data(), dout.gpu.data(), x.gpu.data(),
                                mean.gpu.data(), rstd.gpu.data(), N, C);
  expectSame("ln dinp (B half)", dx);
  expectSame("ln dweight (W half)", dw);
  expectSame("ln dbias (W half)", db);
}

TEST_F(CudaBackendTest, Attention) {
  Pair &qkv = put(randomFloats(N * 3 * C, 18)), &out = zeros(N * C), &att = zeros(B * NH * T * T);
  cpu_.attentionForward(out.cpu.data(), att.cpu.data(), qkv.cpu.data(), B, T, C, NH);
  gpu_->attentionForward(out.gpu.data(), att.gpu.data(), qkv.gpu.data(), B, T, C, NH);
  expectSame("attention out", out);
  expectSame("attention probabilities", att);
  EXPECT_EQ(gpu_->attentionScratchShape(T, NH), (Shape{NH, T, T}));
  Tensor cpuScratch = cpu_.newTensor(cpu_.attentionScratchShape(T, NH), MemoryCategory::kOther);
  Tensor gpuScratch = gpu_->newTensor(gpu_->attentionScratchShape(T, NH), MemoryCategory::kOther);
  Pair &dout = put(randomFloats(N * C, 19)), &dqkv = put(randomFloats(N * 3 * C, 20));
  cpu_.attentionBackward(dqkv.cpu.data(), cpuScratch.data(), dout.cpu.data(), qkv.cpu.data(),
                         att.cpu.data(), B, T, C, NH);
  gpu_->attentionBackward(dqkv.gpu.data(), gpuScratch.data(), dout.gpu.data(), qkv.gpu.data(),
                          att.gpu.data(), B, T, C, NH);
  expectSame("attention dqkv", dqkv);
}

TEST_F(CudaBackendTest, Pointwise) {
  const int64_t n = N * F;
  Pair &x = put(randomFloats(n, 21)), &y = put(randomFloats(n, 22)),
       &dout = put(randomFloats(n, 23)), &out = zeros(n), &dx = put(randomFloats(n, 24));
  cpu_.geluForward(out.cpu.data(), x.cpu.data(), n);
  gpu_->geluForward(out.gpu.data(), x.gpu.data(), n);
  expectSame("gelu out", out);
  cpu_.geluBackward(dx.cpu.data(), x.cpu.data(), dout.cpu.data(), n);
  gpu_->geluBackward(dx.gpu.data(), x.gpu.data(), dout.gpu.data(), n);
  expectSame("gelu dinp", dx);
  cpu_.residualForward(out.cpu.data(), x.cpu.data(), y.cpu.data(), n);
  gpu_->residualForward(out.gpu.data(), x.gpu.data(), y.gpu.data(), n);
  expectSame("residual out", out, 0.0f);
  cpu_.residualBackward(x.cpu.data(), y.cpu.data(), dout.cpu.data(), n);
  gpu_->residualBackward(x.gpu.data(), y.gpu.data(), dout.gpu.data(), n);
  expectSame("residual da", x, 0.0f);
  expectSame("residual db", y, 0.0f);
}

TEST_F(CudaBackendTest, EmbeddingAndCrossEntropy) {
  const auto tok = randomTokens(N, static_cast<int32_t>(V), 25);
  auto [ctok, gtok] = ids(tok);
  Pair &wte = put(randomFloats(V * C, 26)), &wpe = put(randomFloats(T * C, 27)),
       &out = zeros(N * C);
  cpu_.embeddingForward(out.cpu.data(), ctok.data(), wte.cpu.data(), wpe.cpu.data(), B, T, C);
  gpu_->embeddingForward(out.gpu.data(), gtok.data(), wte.gpu.data(), wpe.gpu.data(), B, T, C);
  expectSame("embedding out", out);
  Pair &dout = put(randomFloats(N * C, 28)), &dwte = put(randomFloats(V * C, 29)),
       &dwpe = put(randomFloats(T * C, 30));
  cpu_.embeddingBackward(dwte.cpu.data(), dwpe.cpu.data(), dout.cpu.data(), ctok.data(), B, T, C);
  gpu_->embeddingBackward(dwte.gpu.data(), dwpe.gpu.data(), dout.gpu.data(), gtok.data(), B, T, C);
  expectSame("embedding dwte", dwte);
  expectSame("embedding dwpe", dwpe, 0.0f);

  Pair &probs = put(randomFloats(N * V, 31, 3.0f)), &losses = zeros(N);
  cpu_.crossEntropyForward(probs.cpu.data(), losses.cpu.data(), ctok.data(), N, V);
  gpu_->crossEntropyForward(probs.gpu.data(), losses.gpu.data(), gtok.data(), N, V);
  expectSame("cross-entropy probabilities", probs);
  expectSame("cross-entropy losses", losses);
  cpu_.crossEntropyBackward(probs.cpu.data(), ctok.data(), 1.0f / N, N, V);
  gpu_->crossEntropyBackward(probs.gpu.data(), gtok.data(), 1.0f / N, N, V);
  expectSame("cross-entropy dlogits", probs);
}

TEST_F(CudaBackendTest, AdamW) {
  const AdamWConfig config;
  const int64_t n = 5003;
  auto vHost = randomFloats(n, 35);
  for (float& x : vHost) x = x * x;
  Pair &p = put(randomFloats(n, 32)), &g = put(randomFloats(n, 33)),
       &m = put(randomFloats(n, 34, 0.1f)), &v = put(vHost);
  for (int64_t t = 1; t <= 3; ++t) {
    cpu_.adamwUpdate(p.cpu.data(), g.cpu.data(), m.cpu.data(), v.cpu.data(), n, config, 1e-2, t,
                     t != 2);
    gpu_->adamwUpdate(p.gpu.data(), g.gpu.data(), m.gpu.data(), v.gpu.data(), n, config, 1e-2, t,
                      t != 2);
  }
  expectSame("adamw param", p);
  expectSame("adamw m", m);
  expectSame("adamw v", v);
}

}  // namespace
}  // namespace bubblescope::engine::cuda
