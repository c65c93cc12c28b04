#include "engine/gpt_layers.h"

#include <algorithm>
#include <cmath>

#include "engine/cpu_kernels.h"

namespace bubblescope::engine {
namespace {
constexpr double kInitStd = 0.02;  // GPT-2's initialiser

double residualProjectionStd(const layout::ModelConfig& c) {
  // GPT-2 scales the projections into the residual stream by 1/sqrt(2L).
  return kInitStd / std::sqrt(2.0 * c.numLayers);
}
}  // namespace

namespace k = kernels;

// ---- EmbeddingLayerT ---------------------------------------------------------

template <class S>
EmbeddingLayerT<S>::EmbeddingLayerT(const layout::ModelConfig& config, Allocator* allocator)
    : config_(config),
      wte_("wte.weight", {config.vocabSize, config.hidden}, InitKind::kNormal, kInitStd, true,
           allocator),
      wpe_("wpe.weight", {config.seqLen, config.hidden}, InitKind::kNormal, kInitStd / 2, true,
           allocator) {}

template <class S>
void EmbeddingLayerT<S>::forward(S* out, const int32_t* tokens, int64_t b, int64_t t) const {
  k::embeddingForward(out, tokens, wte_.value.data(), wpe_.value.data(), b, t, config_.hidden);
}

template <class S>
void EmbeddingLayerT<S>::backward(const S* dout, const int32_t* tokens, int64_t b, int64_t t) {
  k::embeddingBackward(wte_.grad.data(), wpe_.grad.data(), dout, tokens, b, t, config_.hidden);
}

// ---- TransformerBlockT -------------------------------------------------------

template <class S>
TransformerBlockT<S>::TransformerBlockT(const layout::ModelConfig& config, int32_t index,
                                        Allocator* allocator)
    : config_(config), index_(index), name_("h." + std::to_string(index)) {
  const int64_t c = config.hidden, f = config.mlpHidden();
  const double projStd = residualProjectionStd(config);
  auto make = [&](const char* suffix, Shape shape, InitKind kind, double std, bool decay) {
    return ParameterT<S>(name_ + "." + suffix, std::move(shape), kind, std, decay, allocator);
  };
  ln1Weight_ = make("ln_1.weight", {c}, InitKind::kOnes, 0, false);
  ln1Bias_ = make("ln_1.bias", {c}, InitKind::kZeros, 0, false);
  qkvWeight_ = make("attn.qkv.weight", {3 * c, c}, InitKind::kNormal, kInitStd, true);
  qkvBias_ = make("attn.qkv.bias", {3 * c}, InitKind::kZeros, 0, false);
  projWeight_ = make("attn.proj.weight", {c, c}, InitKind::kNormal, projStd, true);
  projBias_ = make("attn.proj.bias", {c}, InitKind::kZeros, 0, false);
  ln2Weight_ = make("ln_2.weight", {c}, InitKind::kOnes, 0, false);
  ln2Bias_ = make("ln_2.bias", {c}, InitKind::kZeros, 0, false);
  fcWeight_ = make("mlp.fc.weight", {f, c}, InitKind::kNormal, kInitStd, true);
  fcBias_ = make("mlp.fc.bias", {f}, InitKind::kZeros, 0, false);
  fcProjWeight_ = make("mlp.proj.weight", {c, f}, InitKind::kNormal, projStd, true);
  fcProjBias_ = make("mlp.proj.bias", {c}, InitKind::kZeros, 0, false);
}

template <class S>
std::vector<ParameterT<S>*> TransformerBlockT<S>::parameters() {
  return {&ln1Weight_, &ln1Bias_, &qkvWeight_, &qkvBias_, &projWeight_,   &projBias_,
          &ln2Weight_, &ln2Bias_, &fcWeight_,  &fcBias_,  &fcProjWeight_, &fcProjBias_};
}

template <class S>
void TransformerBlockT<S>::forward(const S* x, BlockActivationsT<S>& a, int64_t b,
                                   int64_t t) const {
  const int64_t n = b * t, c = config_.hidden, f = config_.mlpHidden(), nh = config_.numHeads;
  k::layerNormForward(a.ln1.data(), a.ln1Mean.data(), a.ln1Rstd.data(), x, ln1Weight_.value.data(),
                      ln1Bias_.value.data(), n, c);
  k::linearForward(a.qkv.data(), a.ln1.data(), qkvWeight_.value.data(), qkvBias_.value.data(), n, c,
                   3 * c);
  k::attentionForward(a.attY.data(), a.att.data(), a.qkv.data(), b, t, c, nh);
  k::linearForward(a.res1.data(), a.attY.data(), projWeight_.value.data(), projBias_.value.data(),
                   n, c, c);
  k::residualForward(a.res1.data(), x, a.res1.data(), n * c);
  k::layerNormForward(a.ln2.data(), a.ln2Mean.data(), a.ln2Rstd.data(), a.res1.data(),
                      ln2Weight_.value.data(), ln2Bias_.value.data(), n, c);
  k::linearForward(a.fc.data(), a.ln2.data(), fcWeight_.value.data(), fcBias_.value.data(), n, c,
                   f);
  k::geluForward(a.fcGelu.data(), a.fc.data(), n * f);
  k::linearForward(a.out.data(), a.fcGelu.data(), fcProjWeight_.value.data(),
                   fcProjBias_.value.data(), n, f, c);
  k::residualForward(a.out.data(), a.res1.data(), a.out.data(), n * c);
}

template <class S>
void TransformerBlockT<S>::backward(S* dx, const S* dout, const S* x, BlockActivationsT<S>& a,
                                    BackwardScratchT<S>& g, int64_t b, int64_t t) {
  const BlockGradsT<S> keep{g.dFc.data(), g.dRes1.data(), g.dQkv.data(), g.dLn2.data(),
                            g.dLn.data()};
  backwardInput(dx, dout, x, a, g, keep, b, t);
  backwardWeight(dout, x, a, keep, b, t);
}

template <class S>
void TransformerBlockT<S>::backwardInput(S* dx, const S* dout, const S* x,
                                         const BlockActivationsT<S>& a, BackwardScratchT<S>& g,
                                         const BlockGradsT<S>& keep, int64_t b, int64_t t) const {
  const int64_t n = b * t, c = config_.hidden, f = config_.mlpHidden(), nh = config_.numHeads;
  auto zero = [](S* p, int64_t count) { std::fill(p, p + count, S(0)); };
  // out = res1 + mlp(res1): dres1 = dout + (MLP branch below).
  std::copy(dout, dout + n * c, keep.dRes1);
  g.dFcGelu.zero();
  k::linearBackwardInput(g.dFcGelu.data(), dout, fcProjWeight_.value.data(), n, f, c);
  zero(keep.dFc, n * f);
  k::geluBackward(keep.dFc, a.fc.data(), g.dFcGelu.data(), n * f);
  zero(keep.dLn2, n * c);
  k::linearBackwardInput(keep.dLn2, keep.dFc, fcWeight_.value.data(), n, c, f);
  k::layerNormBackwardInput(keep.dRes1, keep.dLn2, a.res1.data(), ln2Weight_.value.data(),
                            a.ln2Mean.data(), a.ln2Rstd.data(), n, c);
  // res1 = x + proj(attn(ln1(x))): dx += dres1 + (attention branch below).
  for (int64_t i = 0; i < n * c; ++i) dx[i] += keep.dRes1[i];
  g.dAttY.zero();
  k::linearBackwardInput(g.dAttY.data(), keep.dRes1, projWeight_.value.data(), n, c, c);
  zero(keep.dQkv, n * 3 * c);
  k::attentionBackward(keep.dQkv, g.dAtt.data(), g.dAttY.data(), a.qkv.data(), a.att.data(), b, t,
                       c, nh);
  zero(keep.dLn1, n * c);
  k::linearBackwardInput(keep.dLn1, keep.dQkv, qkvWeight_.value.data(), n, c, 3 * c);
  k::layerNormBackwardInput(dx, keep.dLn1, x, ln1Weight_.value.data(), a.ln1Mean.data(),
                            a.ln1Rstd.data(), n, c);
}

template <class S>
void TransformerBlockT<S>::backwardWeight(const S* dout, const S* x, const BlockActivationsT<S>& a,
                                          const BlockGradsT<S>& keep, int64_t b, int64_t t) {
  const int64_t n = b * t, c = config_.hidden, f = config_.mlpHidden();
  // The same layers as backwardInput(), in the same order.
  k::linearBackwardWeight(fcProjWeight_.grad.data(), fcProjBias_.grad.data(), dout, a.fcGelu.data(),
                          n, f, c);
  k::linearBackwardWeight(fcWeight_.grad.data(), fcBias_.grad.data(), keep.dFc, a.ln2.data(), n, c,
                          f);
  k::layerNormBackwardWeight(ln2Weight_.grad.data(), ln2Bias_.grad.data(), keep.dLn2, a.res1.data(),
                             a.ln2Mean.data(), a.ln2Rstd.data(), n, c);
  k::linearBackwardWeight(projWeight_.grad.data(), projBias_.grad.data(), keep.dRes1, a.attY.data(),
                          n, c, c);
  k::linearBackwardWeight(qkvWeight_.grad.data(), qkvBias_.grad.data(), keep.dQkv, a.ln1.data(), n,
                          c, 3 * c);
  k::layerNormBackwardWeight(ln1Weight_.grad.data(), ln1Bias_.grad.data(), keep.dLn1, x,
                             a.ln1Mean.data(), a.ln1Rstd.data(), n, c);
}

template <class S>
int64_t TransformerBlockT<S>::weightGradFlops(int64_t b, int64_t t) const {
  const int64_t n = b * t, c = config_.hidden, f = config_.mlpHidden();
  return 2 * n * (3 * c * c + c * c + 2 * c * f);
}

template <class S>
int64_t TransformerBlockT<S>::forwardFlops(int64_t b, int64_t t) const {
  const int64_t n = b * t, c = config_.hidden, f = config_.mlpHidden();
  const int64_t matmuls = 2 * n * (3 * c * c + c * c + 2 * c * f);
  const int64_t attention = 4 * b * t * t * c;  // q·k^T and att·v, full T×T
  return matmuls + attention;
}

// ---- OutputHeadT -------------------------------------------------------------

template <class S>
OutputHeadT<S>::OutputHeadT(const layout::ModelConfig& config, Allocator* allocator)
    : config_(config),
      lnfWeight_("ln_f.weight", {config.hidden}, InitKind::kOnes, 0, false, allocator),
      lnfBias_("ln_f.bias", {config.hidden}, InitKind::kZeros, 0, false, allocator),
      lmHead_("lm_head.weight", {config.vocabSize, config.hidden}, InitKind::kNormal, kInitStd,
              true, allocator) {}

template <class S>
double OutputHeadT<S>::forward(const S* x, const int32_t* targets, HeadActivationsT<S>& a,
                               int64_t b, int64_t t) const {
  const int64_t n = b * t, c = config_.hidden, v = config_.vocabSize;
  k::layerNormForward(a.lnf.data(), a.lnfMean.data(), a.lnfRstd.data(), x, lnfWeight_.value.data(),
                      lnfBias_.value.data(), n, c);
  k::linearForward<S>(a.probs.data(), a.lnf.data(), lmHead_.value.data(), nullptr, n, c, v);
  k::crossEntropyForward(a.probs.data(), a.losses.data(), targets, n, v);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(a.losses.data()[i]);
  return sum / static_cast<double>(n);
}

template <class S>
void OutputHeadT<S>::backward(S* dx, const S* x, const int32_t* targets, HeadActivationsT<S>& a,
                              BackwardScratchT<S>& g, double lossScale, int64_t b, int64_t t) {
  backwardInput(dx, g.dLn.data(), x, targets, a, lossScale, b, t);
  backwardWeight(g.dLn.data(), x, a, b, t);
}

template <class S>
void OutputHeadT<S>::backwardInput(S* dx, S* dLnf, const S* x, const int32_t* targets,
                                   HeadActivationsT<S>& a, double lossScale, int64_t b,
                                   int64_t t) const {
  const int64_t n = b * t, c = config_.hidden, v = config_.vocabSize;
  k::crossEntropyBackward(a.probs.data(), targets, static_cast<S>(lossScale / n), n, v);
  std::fill(dLnf, dLnf + n * c, S(0));
  k::linearBackwardInput(dLnf, a.probs.data(), lmHead_.value.data(), n, c, v);
  k::layerNormBackwardInput(dx, dLnf, x, lnfWeight_.value.data(), a.lnfMean.data(),
                            a.lnfRstd.data(), n, c);
}

template <class S>
void OutputHeadT<S>::backwardWeight(const S* dLnf, const S* x, const HeadActivationsT<S>& a,
                                    int64_t b, int64_t t) {
  const int64_t n = b * t, c = config_.hidden, v = config_.vocabSize;
  k::linearBackwardWeight<S>(lmHead_.grad.data(), nullptr, a.probs.data(), a.lnf.data(), n, c, v);
  k::layerNormBackwardWeight(lnfWeight_.grad.data(), lnfBias_.grad.data(), dLnf, x,
                             a.lnfMean.data(), a.lnfRstd.data(), n, c);
}

template <class S>
int64_t OutputHeadT<S>::forwardFlops(int64_t b, int64_t t) const {
  return 2 * b * t * config_.hidden * config_.vocabSize;
}

template class EmbeddingLayerT<float>;
template class EmbeddingLayerT<double>;
template class TransformerBlockT<float>;
template class TransformerBlockT<double>;
template class OutputHeadT<float>;
template class OutputHeadT<double>;

}  // namespace bubblescope::engine
