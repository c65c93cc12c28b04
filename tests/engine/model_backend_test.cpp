// The float model computes through the Backend it is given (engine/layer_ops.h):
// every layer op and host loop is a backend op, and on a CpuBackend the
// results are bit for bit those of the default (model-owned CpuBackend).
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>

#include "engine/cpu_backend.h"
#include "engine/gpt_model.h"
#include "engine/rng.h"

namespace bubblescope::engine {
namespace {

layout::ModelConfig smallConfig() {
  layout::ModelConfig c;
  c.preset = "custom";
  c.vocabSize = 13;
  c.seqLen = 8;
  c.numLayers = 2;
  c.hidden = 16;
  c.numHeads = 4;
  c.mlpRatio = 2;
  return c;
}

// A CpuBackend that counts the ops called on it.
class CountingBackend final : public Backend {
 public:
  std::map<std::string, int> calls;
  Device device() const override { return cpu_.device(); }
  std::string description() const override { return "counting " + cpu_.description(); }
  Allocator& allocator() override { return cpu_.allocator(); }
  Status synchronize() override { return cpu_.synchronize(); }
#define BS_COUNT(name) ++calls[#name]
  void copyToDevice(void* d, const void* s, size_t n) override {
    BS_COUNT(copyToDevice);
    cpu_.copyToDevice(d, s, n);
  }
  Status copyToHost(void* d, const void* s, size_t n) override {
    BS_COUNT(copyToHost);
    return cpu_.copyToHost(d, s, n);
  }
  void copy(void* d, const void* s, size_t n) override {
    BS_COUNT(copy);
    cpu_.copy(d, s, n);
  }
  void fill(float* x, float v, int64_t n) override {
    BS_COUNT(fill);
    cpu_.fill(x, v, n);
  }
  void axpy(float* y, float a, const float* x, int64_t n) override {
    BS_COUNT(axpy);
    cpu_.axpy(y, a, x, n);
  }
  void scale(float* x, float a, int64_t n) override {
    BS_COUNT(scale);
    cpu_.scale(x, a, n);
  }
  Result<double> sum(const float* x, int64_t n) override {
    BS_COUNT(sum);
    return cpu_.sum(x, n);
  }
  Result<double> squaredSum(const float* x, int64_t n) override {
    BS_COUNT(squaredSum);
    return cpu_.squaredSum(x, n);
  }
  void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float al, const float* a,
            int64_t lda, const float* b, int64_t ldb, float be, float* c, int64_t ldc) override {
    BS_COUNT(gemm);
    cpu_.gemm(ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc);
  }
  void linearForward(float* o, const float* i, const float* w, const float* b, int64_t n,
                     int64_t ic, int64_t oc) override {
    BS_COUNT(linearForward);
    cpu_.linearForward(o, i, w, b, n, ic, oc);
  }
  void linearBackwardInput(float* di, const float* d, const float* w, int64_t n, int64_t ic,
                           int64_t oc) override {
    BS_COUNT(linearBackwardInput);
    cpu_.linearBackwardInput(di, d, w, n, ic, oc);
  }
  void linearBackwardWeight(float* dw, float* db, const float* d, const float* i, int64_t n,
                            int64_t ic, int64_t oc) override {
    BS_COUNT(linearBackwardWeight);
    cpu_.linearBackwardWeight(dw, db, d, i, n, ic, oc);
  }
  void layerNormForward(float* o, float* m, float* r, const float* i, const float* w,
                        const float* b, int64_t n, int64_t c) override {
    BS_COUNT(layerNormForward);
    cpu_.layerNormForward(o, m, r, i, w, b, n, c);
  }
  void layerNormBackward(float* di, float* dw, float* db, const float* d, const float* i,
                         const float* w, const float* m, const float* r, int64_t n,
                         int64_t c) override {
    BS_COUNT(layerNormBackward);
    cpu_.layerNormBackward(di, dw, db, d, i, w, m, r, n, c);
  }
  void layerNormBackwardInput(float* di, const float* d, const float* i, const float* w,
                              const float* m, const float* r, int64_t n, int64_t c) override {
    BS_COUNT(layerNormBackwardInput);
    cpu_.layerNormBackwardInput(di, d, i, w, m, r, n, c);
  }
  void layerNormBackwardWeight(float* dw, float* db, const float* d, const float* i, const float* m,
                               const float* r, int64_t n, int64_t c) override {
    BS_COUNT(layerNormBackwardWeight);
    cpu_.layerNormBackwardWeight(dw, db, d, i, m, r, n, c);
  }
  Shape attentionScratchShape(int64_t t, int64_t nh) const override {
    return cpu_.attentionScratchShape(t, nh);
  }
  void attentionForward(float* o, float* a, const float* q, int64_t b, int64_t t, int64_t c,
                        int64_t nh) override {
    BS_COUNT(attentionForward);
    cpu_.attentionForward(o, a, q, b, t, c, nh);
  }
  void attentionBackward(float* dq, float* s, const float* d, const float* q, const float* a,
                         int64_t b, int64_t t, int64_t c, int64_t nh) override {
    BS_COUNT(attentionBackward);
    cpu_.attentionBackward(dq, s, d, q, a, b, t, c, nh);
  }
  void geluForward(float* o, const float* i, int64_t n) override {
    BS_COUNT(geluForward);
    cpu_.geluForward(o, i, n);
  }
  void geluBackward(float* di, const float* i, const float* d, int64_t n) override {
    BS_COUNT(geluBackward);
    cpu_.geluBackward(di, i, d, n);
  }
  void residualForward(float* o, const float* a, const float* b, int64_t n) override {
    BS_COUNT(residualForward);
    cpu_.residualForward(o, a, b, n);
  }
  void residualBackward(float* da, float* db, const float* d, int64_t n) override {
    BS_COUNT(residualBackward);
    cpu_.residualBackward(da, db, d, n);
  }
  void embeddingForward(float* o, const int32_t* tk, const float* wte, const float* wpe, int64_t b,
                        int64_t t, int64_t c) override {
    BS_COUNT(embeddingForward);
    cpu_.embeddingForward(o, tk, wte, wpe, b, t, c);
  }
  void embeddingBackward(float* dwte, float* dwpe, const float* d, const int32_t* tk, int64_t b,
                         int64_t t, int64_t c) override {
    BS_COUNT(embeddingBackward);
    cpu_.embeddingBackward(dwte, dwpe, d, tk, b, t, c);
  }
  void crossEntropyForward(float* p, float* l, const int32_t* tg, int64_t n, int64_t v) override {
    BS_COUNT(crossEntropyForward);
    cpu_.crossEntropyForward(p, l, tg, n, v);
  }
  void crossEntropyBackward(float* p, const int32_t* tg, float dl, int64_t n, int64_t v) override {
    BS_COUNT(crossEntropyBackward);
    cpu_.crossEntropyBackward(p, tg, dl, n, v);
  }
  void adamwUpdate(float* p, const float* g, float* m, float* v, int64_t n, const AdamWConfig& c,
                   double lr, int64_t t, bool decay) override {
    BS_COUNT(adamwUpdate);
    cpu_.adamwUpdate(p, g, m, v, n, c, lr, t, decay);
  }
#undef BS_COUNT

 private:
  CpuBackend cpu_;
};

struct Ids {
  std::vector<int32_t> tokens, targets;
};

Ids makeIds(int64_t n, int32_t vocab) {
  Rng rng(7);
  Ids ids;
  for (int64_t i = 0; i < n; ++i) {
    ids.tokens.push_back(static_cast<int32_t>(rng.below(vocab)));
    ids.targets.push_back(static_cast<int32_t>(rng.below(vocab)));
  }
  return ids;
}

// One forward and backward; returns the loss.
double step(GptModel& model, const Ids& ids, int64_t b, int64_t t) {
  auto acts = std::move(model.newActivations(b, t).value());
  model.zeroGrad();
  auto loss = model.forward(*acts, {ids.tokens, {}, ids.targets});
  EXPECT_TRUE(loss.isOk()) << loss.status().toString();
  EXPECT_TRUE(model.backward(*acts, {}, 0.5).isOk());
  return loss.isOk() ? *loss : 0.0;
}

TEST(ModelBackendTest, EveryLayerOpGoesThroughTheGivenBackend) {
  const auto config = smallConfig();
  CountingBackend backend;
  auto model = std::move(GptModel::create(config, backend).value());
  EXPECT_EQ(model->backend(), &backend);
  model->initialize(3);
  // Parameters, gradients and activations come from the backend's allocator.
  EXPECT_EQ(backend.allocator().currentBytes(MemoryCategory::kParameters),
            4 * model->parameterCount());
  const int64_t b = 2, t = config.seqLen, l = config.numLayers;
  const Ids ids = makeIds(b * t, config.vocabSize);
  step(*model, ids, b, t);
  EXPECT_GT(backend.allocator().peakBytes(MemoryCategory::kActivations), 0);
  auto& c = backend.calls;
  EXPECT_EQ(c["embeddingForward"], 1);
  EXPECT_EQ(c["embeddingBackward"], 1);
  EXPECT_EQ(c["layerNormForward"], 2 * l + 1);
  EXPECT_EQ(c["linearForward"], 4 * l + 1);
  EXPECT_EQ(c["attentionForward"], l);
  EXPECT_EQ(c["attentionBackward"], l);
  EXPECT_EQ(c["geluForward"], l);
  EXPECT_EQ(c["geluBackward"], l);
  EXPECT_EQ(c["residualForward"], 2 * l);
  EXPECT_EQ(c["crossEntropyForward"], 1);
  EXPECT_EQ(c["crossEntropyBackward"], 1);
  EXPECT_EQ(c["linearBackwardInput"], 4 * l + 1);
  EXPECT_EQ(c["linearBackwardWeight"], 4 * l + 1);
  EXPECT_EQ(c["layerNormBackwardInput"], 2 * l + 1);
  EXPECT_EQ(c["layerNormBackwardWeight"], 2 * l + 1);
  EXPECT_EQ(c["sum"], 1);           // the mean loss, read back once
  EXPECT_EQ(c["axpy"], l);          // dx += dres1 per block
  EXPECT_EQ(c["copyToDevice"], 2);  // tokens and targets uploaded
  EXPECT_GE(c["fill"], static_cast<int>(model->parameters().size()));  // zeroGrad and more
  EXPECT_EQ(c["copy"], l);                                             // dres1 = dout per block
}

TEST(ModelBackendTest, AGivenCpuBackendMatchesTheDefaultBitForBit) {
  const auto config = smallConfig();
  Allocator allocator;
  auto byDefault = std::move(GptModel::create(config, &allocator).value());
  CpuBackend backend;
  auto onBackend = std::move(GptModel::create(config, backend).value());
  ASSERT_NE(byDefault->backend(), nullptr);  // the model's own CpuBackend
  byDefault->initialize(11);
  onBackend->initialize(11);
  const int64_t b = 2, t = config.seqLen;
  const Ids ids = makeIds(b * t, config.vocabSize);
  const double a = step(*byDefault, ids, b, t), c = step(*onBackend, ids, b, t);
  EXPECT_EQ(std::memcmp(&a, &c, sizeof a), 0) << a << " vs " << c;
  EXPECT_GT(a, 0.0);
  const auto pa = byDefault->parameters(), pc = onBackend->parameters();
  ASSERT_EQ(pa.size(), pc.size());
  for (size_t i = 0; i < pa.size(); ++i) {
    ASSERT_EQ(pa[i]->grad.bytes(), pc[i]->grad.bytes());
    EXPECT_EQ(std::memcmp(pa[i]->grad.data(), pc[i]->grad.data(), pa[i]->grad.bytes()), 0)
        << pa[i]->name;
  }
}

}  // namespace
}  // namespace bubblescope::engine
