#include "engine/gpt_layers.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace bubblescope::engine {
namespace {
constexpr double kInitStd = 0.02;  // GPT-2's initialiser

double residualProjectionStd(const layout::ModelConfig& c) {
  // GPT-2 scales the projections into the residual stream by 1/sqrt(2L).
  return kInitStd / std::sqrt(2.0 * c.numLayers);
}
}  // namespace

// ---- EmbeddingLayerT ---------------------------------------------------------

template <class S>
EmbeddingLayerT<S>::EmbeddingLayerT(const layout::ModelConfig& config, Allocator* allocator,
                                    LayerOpsT<S> ops)
    : config_(config),
      ops_(ops),
      wte_("wte.weight", {config.vocabSize, config.hidden}, InitKind::kNormal, kInitStd, true,
           allocator),
      wpe_("wpe.weight", {config.seqLen, config.hidden}, InitKind::kNormal, kInitStd / 2, true,
           allocator) {}

template <class S>
void EmbeddingLayerT<S>::forward(S* out, const int32_t* tokens, int64_t b, int64_t t) const {
  ops_.embeddingForward(out, tokens, wte_.value.data(), wpe_.value.data(), b, t, config_.hidden);
}

template <class S>
void EmbeddingLayerT<S>::backward(const S* dout, const int32_t* tokens, int64_t b, int64_t t) {
  ops_.embeddingBackward(wte_.grad.data(), wpe_.grad.data(), dout, tokens, b, t, config_.hidden);
}

// ---- TransformerBlockT -------------------------------------------------------

template <class S>
TransformerBlockT<S>::TransformerBlockT(const layout::ModelConfig& config, int32_t index,
                                        Allocator* allocator, LayerOpsT<S> ops,
                                        TensorParallelGroup* tp, ExpertParallelGroup* ep)
    : config_(config), ops_(ops), index_(index), name_("h." + std::to_string(index)), tp_(tp) {
  const int64_t c = config.hidden, f = config.mlpHidden();
  const double projStd = residualProjectionStd(config);
  const int32_t rank = tp ? tp->rank() : 0, size = tp ? tp->size() : 1;
  const TensorShard replicated;
  const TensorShard qkvRows{.dim = 0, .parts = 3, .rank = rank, .size = size};
  const TensorShard rows{.dim = 0, .parts = 1, .rank = rank, .size = size};
  const TensorShard columns{.dim = 1, .parts = 1, .rank = rank, .size = size};
  auto make = [&](const char* suffix, Shape shape, InitKind kind, double std, bool decay,
                  const TensorShard& shard) {
    return ParameterT<S>(name_ + "." + suffix, std::move(shape), kind, std, decay, allocator,
                         shard);
  };
  ln1Weight_ = make("ln_1.weight", {c}, InitKind::kOnes, 0, false, replicated);
  ln1Bias_ = make("ln_1.bias", {c}, InitKind::kZeros, 0, false, replicated);
  qkvWeight_ = make("attn.qkv.weight", {3 * c, c}, InitKind::kNormal, kInitStd, true, qkvRows);
  qkvBias_ = make("attn.qkv.bias", {3 * c}, InitKind::kZeros, 0, false, qkvRows);
  projWeight_ = make("attn.proj.weight", {c, c}, InitKind::kNormal, projStd, true, columns);
  projBias_ = make("attn.proj.bias", {c}, InitKind::kZeros, 0, false, replicated);
  ln2Weight_ = make("ln_2.weight", {c}, InitKind::kOnes, 0, false, replicated);
  ln2Bias_ = make("ln_2.bias", {c}, InitKind::kZeros, 0, false, replicated);
  if (config.isMoeBlock(index)) {
    moe_ = std::make_unique<MoeFeedForwardT<S>>(config, name_, projStd, allocator, ops, ep);
    return;
  }
  fcWeight_ = make("mlp.fc.weight", {f, c}, InitKind::kNormal, kInitStd, true, rows);
  fcBias_ = make("mlp.fc.bias", {f}, InitKind::kZeros, 0, false, rows);
  fcProjWeight_ = make("mlp.proj.weight", {c, f}, InitKind::kNormal, projStd, true, columns);
  fcProjBias_ = make("mlp.proj.bias", {c}, InitKind::kZeros, 0, false, replicated);
}

template <class S>
std::vector<ParameterT<S>*> TransformerBlockT<S>::parameters() {
  std::vector<ParameterT<S>*> all{&ln1Weight_,  &ln1Bias_,  &qkvWeight_, &qkvBias_,
                                  &projWeight_, &projBias_, &ln2Weight_, &ln2Bias_};
  if (moe_) {
    for (auto* p : moe_->parameters()) all.push_back(p);
  } else {
    for (auto* p : {&fcWeight_, &fcBias_, &fcProjWeight_, &fcProjBias_}) all.push_back(p);
  }
  return all;
}

template <class S>
Status TransformerBlockT<S>::reduceOverTp(S* data, int64_t count, const char* name,
                                          const TraceContext& trace) const {
  if (tpSize() == 1) return Status::ok();
  return tp_->allReduce(std::span<S>(data, static_cast<size_t>(count)), name, trace);
}

template <class S>
Status TransformerBlockT<S>::rowParallelForward(S* out, const S* inp, const ParameterT<S>& weight,
                                                const ParameterT<S>& bias, int64_t n, int64_t ic,
                                                const char* name, const TraceContext& trace,
                                                ComputeSegments& segment) const {
  const int64_t c = config_.hidden;
  if (tpSize() == 1) {
    ops_.linearForward(out, inp, weight.value.data(), bias.value.data(), n, ic, c);
    return Status::ok();
  }
  ops_.linearForward(out, inp, weight.value.data(), nullptr, n, ic, c);  // this rank's part
  segment.end();
  BS_RETURN_IF_ERROR(reduceOverTp(out, n * c, name, trace));
  // The replicated bias, once, after the sum: row i += bias (1 · bias is exact).
  for (int64_t i = 0; i < n; ++i) ops_.axpy(out + i * c, S(1), bias.value.data(), c);
  return Status::ok();
}

template <class S>
Status TransformerBlockT<S>::forward(const S* x, BlockActivationsT<S>& a, int64_t b, int64_t t,
                                     const TraceContext& trace) const {
  const int64_t p = tpSize(), n = b * t, c = config_.hidden;
  const int64_t cl = c / p, fl = config_.mlpHidden() / p, nhl = config_.numHeads / p;
  ComputeSegments segment(trace, communicates(), trace.forwardKind, name_.c_str());
  segment.begin(attentionFlops(b, t));
  ops_.layerNormForward(a.ln1.data(), a.ln1Mean.data(), a.ln1Rstd.data(), x,
                        ln1Weight_.value.data(), ln1Bias_.value.data(), n, c);
  // Entry: ln1 is replicated (identity forward); this rank's heads only.
  ops_.linearForward(a.qkv.data(), a.ln1.data(), qkvWeight_.value.data(), qkvBias_.value.data(), n,
                     c, 3 * cl);
  ops_.attentionForward(a.attY.data(), a.att.data(), a.qkv.data(), b, t, cl, nhl);
  BS_RETURN_IF_ERROR(rowParallelForward(a.res1.data(), a.attY.data(), projWeight_, projBias_, n, cl,
                                        "tp_attn_all_reduce", trace, segment));
  // An MoE block under ep records its own segments (moe_layer.h).
  segment.begin(moe_ && moe_->communicates() ? 0 : mlpFlops(b, t));
  ops_.residualForward(a.res1.data(), x, a.res1.data(), n * c);
  ops_.layerNormForward(a.ln2.data(), a.ln2Mean.data(), a.ln2Rstd.data(), a.res1.data(),
                        ln2Weight_.value.data(), ln2Bias_.value.data(), n, c);
  if (moe_) {  // no tp (the model refuses it)
    BS_RETURN_IF_ERROR(moe_->forward(a.out.data(), a.ln2.data(), a.moe, &segment));
  } else {
    ops_.linearForward(a.fc.data(), a.ln2.data(), fcWeight_.value.data(), fcBias_.value.data(), n,
                       c, fl);
    ops_.geluForward(a.fcGelu.data(), a.fc.data(), n * fl);
    BS_RETURN_IF_ERROR(rowParallelForward(a.out.data(), a.fcGelu.data(), fcProjWeight_, fcProjBias_,
                                          n, fl, "tp_mlp_all_reduce", trace, segment));
  }
  segment.begin(0);
  ops_.residualForward(a.out.data(), a.res1.data(), a.out.data(), n * c);
  return Status::ok();
}

template <class S>
Status TransformerBlockT<S>::backward(S* dx, const S* dout, const S* x, BlockActivationsT<S>& a,
                                      BackwardScratchT<S>& g, int64_t b, int64_t t,
                                      double lossScale, const TraceContext& trace) {
  const BlockGradsT<S> keep{g.dFc.data(), g.dRes1.data(), g.dQkv.data(), g.dLn2.data(),
                            g.dLn.data(), &g.moe,         lossScale};
  BS_RETURN_IF_ERROR(backwardInputSegments(dx, dout, x, a, g, keep, b, t, trace,
                                           trace_model::EventKind::kBackward));
  ComputeSegments segment(trace, communicates(), trace_model::EventKind::kBackward, name_.c_str());
  segment.begin(weightGradFlops(b, t));
  backwardWeight(dout, x, a, keep, b, t);
  return Status::ok();
}

template <class S>
Status TransformerBlockT<S>::backwardInput(S* dx, const S* dout, const S* x,
                                           const BlockActivationsT<S>& a, BackwardScratchT<S>& g,
                                           const BlockGradsT<S>& keep, int64_t b, int64_t t,
                                           const TraceContext& trace) const {
  return backwardInputSegments(dx, dout, x, a, g, keep, b, t, trace,
                               trace_model::EventKind::kBackwardInput);
}

template <class S>
Status TransformerBlockT<S>::backwardInputSegments(S* dx, const S* dout, const S* x,
                                                   const BlockActivationsT<S>& a,
                                                   BackwardScratchT<S>& g,
                                                   const BlockGradsT<S>& keep, int64_t b, int64_t t,
                                                   const TraceContext& trace,
                                                   trace_model::EventKind kind) const {
  const int64_t p = tpSize(), n = b * t, c = config_.hidden;
  const int64_t cl = c / p, fl = config_.mlpHidden() / p, nhl = config_.numHeads / p;
  ComputeSegments segment(trace, communicates(), kind, name_.c_str());
  // The MLP's input-gradient products (an MoE block under ep: its own segments).
  segment.begin(moe_ && moe_->communicates() ? 0 : mlpFlops(b, t));
  // out = res1 + mlp(res1): dres1 = dout + (MLP branch below). The exit's
  // all-reduce is the identity backward: dout is already the full gradient.
  ops_.copy(keep.dRes1, dout, n * c);
  if (moe_) {
    ops_.zero(keep.dLn2, n * c);
    BS_RETURN_IF_ERROR(
        moe_->backwardInput(keep.dLn2, dout, a.moe, *keep.moe, keep.lossScale, &segment));
  } else {
    ops_.zero(g.dFcGelu);
    ops_.linearBackwardInput(g.dFcGelu.data(), dout, fcProjWeight_.value.data(), n, fl, c);
    ops_.zero(keep.dFc, n * fl);
    ops_.geluBackward(keep.dFc, a.fc.data(), g.dFcGelu.data(), n * fl);
    ops_.zero(keep.dLn2, n * c);
    ops_.linearBackwardInput(keep.dLn2, keep.dFc, fcWeight_.value.data(), n, c, fl);
  }
  // Entry: the gradient of ln_2's output sums every tp rank's part (W reads
  // the sum too).
  segment.end();
  BS_RETURN_IF_ERROR(reduceOverTp(keep.dLn2, n * c, "tp_mlp_grad_all_reduce", trace));
  segment.begin(2 * forwardFlops(b, t) - weightGradFlops(b, t) - mlpFlops(b, t));
  ops_.layerNormBackwardInput(keep.dRes1, keep.dLn2, a.res1.data(), ln2Weight_.value.data(),
                              a.ln2Mean.data(), a.ln2Rstd.data(), n, c);
  // res1 = x + proj(attn(ln1(x))): dx += dres1 + (attention branch below).
  ops_.axpy(dx, S(1), keep.dRes1, n * c);
  ops_.zero(g.dAttY);
  ops_.linearBackwardInput(g.dAttY.data(), keep.dRes1, projWeight_.value.data(), n, cl, c);
  ops_.zero(keep.dQkv, n * 3 * cl);
  ops_.attentionBackward(keep.dQkv, g.dAtt.data(), g.dAttY.data(), a.qkv.data(), a.att.data(), b, t,
                         cl, nhl);
  ops_.zero(keep.dLn1, n * c);
  ops_.linearBackwardInput(keep.dLn1, keep.dQkv, qkvWeight_.value.data(), n, c, 3 * cl);
  segment.end();
  BS_RETURN_IF_ERROR(reduceOverTp(keep.dLn1, n * c, "tp_attn_grad_all_reduce", trace));
  segment.begin(0);
  ops_.layerNormBackwardInput(dx, keep.dLn1, x, ln1Weight_.value.data(), a.ln1Mean.data(),
                              a.ln1Rstd.data(), n, c);
  return Status::ok();
}

template <class S>
void TransformerBlockT<S>::backwardWeight(const S* dout, const S* x, const BlockActivationsT<S>& a,
                                          const BlockGradsT<S>& keep, int64_t b, int64_t t) {
  const int64_t p = tpSize(), n = b * t, c = config_.hidden;
  const int64_t cl = c / p, fl = config_.mlpHidden() / p;
  // The same layers as backwardInput(), in the same order; no communication
  // (the replicated layer norms and biases read gradients B already summed).
  if (moe_) {
    moe_->backwardWeight(a.ln2.data(), a.moe, *keep.moe);
  } else {
    ops_.linearBackwardWeight(fcProjWeight_.grad.data(), fcProjBias_.grad.data(), dout,
                              a.fcGelu.data(), n, fl, c);
    ops_.linearBackwardWeight(fcWeight_.grad.data(), fcBias_.grad.data(), keep.dFc, a.ln2.data(), n,
                              c, fl);
  }
  ops_.layerNormBackwardWeight(ln2Weight_.grad.data(), ln2Bias_.grad.data(), keep.dLn2,
                               a.res1.data(), a.ln2Mean.data(), a.ln2Rstd.data(), n, c);
  ops_.linearBackwardWeight(projWeight_.grad.data(), projBias_.grad.data(), keep.dRes1,
                            a.attY.data(), n, cl, c);
  ops_.linearBackwardWeight(qkvWeight_.grad.data(), qkvBias_.grad.data(), keep.dQkv, a.ln1.data(),
                            n, c, 3 * cl);
  ops_.layerNormBackwardWeight(ln1Weight_.grad.data(), ln1Bias_.grad.data(), keep.dLn1, x,
                               a.ln1Mean.data(), a.ln1Rstd.data(), n, c);
}

template <class S>
int64_t TransformerBlockT<S>::weightGradFlops(int64_t b, int64_t t) const {
  const int64_t n = b * t, c = config_.hidden;
  return 2 * n * (3 * c * c + c * c) / tpSize() + mlpFlops(b, t);
}

template <class S>
int64_t TransformerBlockT<S>::attentionFlops(int64_t b, int64_t t) const {
  const int64_t n = b * t, c = config_.hidden;
  const int64_t matmuls = 2 * n * (3 * c * c + c * c);  // QKV and the output projection
  const int64_t scores = 4 * b * t * t * c;             // q·k^T and att·v, full T×T
  return (matmuls + scores) / tpSize();                 // split by heads
}

template <class S>
int64_t TransformerBlockT<S>::mlpFlops(int64_t b, int64_t t) const {
  // MoE: the router and topK experts per token (drops not subtracted).
  if (moe_) return moe_->forwardFlops(b * t, b * t * config_.topK);
  return 2 * b * t * 2 * config_.hidden * config_.mlpHidden() / tpSize();  // split by F
}

template <class S>
int64_t TransformerBlockT<S>::forwardFlops(int64_t b, int64_t t) const {
  return attentionFlops(b, t) + mlpFlops(b, t);
}

// ---- OutputHeadT -------------------------------------------------------------

template <class S>
OutputHeadT<S>::OutputHeadT(const layout::ModelConfig& config, Allocator* allocator,
                            LayerOpsT<S> ops)
    : config_(config),
      ops_(ops),
      lnfWeight_("ln_f.weight", {config.hidden}, InitKind::kOnes, 0, false, allocator),
      lnfBias_("ln_f.bias", {config.hidden}, InitKind::kZeros, 0, false, allocator),
      lmHead_("lm_head.weight", {config.vocabSize, config.hidden}, InitKind::kNormal, kInitStd,
              true, allocator) {}

template <class S>
Result<double> OutputHeadT<S>::forward(const S* x, const int32_t* targets, HeadActivationsT<S>& a,
                                       int64_t b, int64_t t) const {
  const int64_t n = b * t, c = config_.hidden, v = config_.vocabSize;
  ops_.layerNormForward(a.lnf.data(), a.lnfMean.data(), a.lnfRstd.data(), x,
                        lnfWeight_.value.data(), lnfBias_.value.data(), n, c);
  ops_.linearForward(a.probs.data(), a.lnf.data(), lmHead_.value.data(), nullptr, n, c, v);
  ops_.crossEntropyForward(a.probs.data(), a.losses.data(), targets, n, v);
  BS_ASSIGN_OR_RETURN(const double sum, ops_.sum(a.losses.data(), n));
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
  ops_.crossEntropyBackward(a.probs.data(), targets, static_cast<S>(lossScale / n), n, v);
  ops_.zero(dLnf, n * c);
  ops_.linearBackwardInput(dLnf, a.probs.data(), lmHead_.value.data(), n, c, v);
  ops_.layerNormBackwardInput(dx, dLnf, x, lnfWeight_.value.data(), a.lnfMean.data(),
                              a.lnfRstd.data(), n, c);
}

template <class S>
void OutputHeadT<S>::backwardWeight(const S* dLnf, const S* x, const HeadActivationsT<S>& a,
                                    int64_t b, int64_t t) {
  const int64_t n = b * t, c = config_.hidden, v = config_.vocabSize;
  ops_.linearBackwardWeight(lmHead_.grad.data(), nullptr, a.probs.data(), a.lnf.data(), n, c, v);
  ops_.layerNormBackwardWeight(lnfWeight_.grad.data(), lnfBias_.grad.data(), dLnf, x,
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
