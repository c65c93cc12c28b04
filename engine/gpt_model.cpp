#include "engine/gpt_model.h"

#include <cmath>
#include <limits>
#include <string>

#include "engine/cpu_backend.h"

namespace bubblescope::engine {
namespace {

Status checkTokens(std::span<const int32_t> ids, int64_t expected, int32_t vocab,
                   const char* what) {
  if (static_cast<int64_t>(ids.size()) != expected) {
    return Status::invalidArgument(std::string(what) + " has " + std::to_string(ids.size()) +
                                   " ids, expected B*T = " + std::to_string(expected));
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= vocab) {
      return Status::invalidArgument(
          std::string(what) + " id " + std::to_string(ids[i]) + " at position " +
          std::to_string(i) + " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
    }
  }
  return Status::ok();
}

// Between backwardInput() and backwardWeight() the activations hold what W
// needs: every other pass over them is refused.
template <class S>
Status requireNoPendingWeightGrads(const ActivationsT<S>& acts, const char* pass) {
  if (!acts.weightGradPending) return Status::ok();
  return Status::failedPrecondition(std::string(pass) +
                                    " over activations whose weight gradients (backwardWeight) "
                                    "are still pending");
}

}  // namespace

template <class S>
GptModelT<S>::GptModelT(const layout::ModelConfig& config, Allocator* allocator,
                        std::unique_ptr<Backend> ownedBackend, Backend* backend, int32_t first,
                        int32_t last, TensorParallelGroup* tp, ExpertParallelGroup* ep)
    : config_(config),
      allocator_(allocator),
      ownedBackend_(std::move(ownedBackend)),
      ops_(backend),
      first_(first),
      last_(last),
      tp_(tp) {
  if (first_ == 0) embedding_.emplace(config_, allocator_, ops_);
  for (int32_t slot = std::max(first_, 1); slot < std::min(last_, config_.numLayers + 1); ++slot) {
    blocks_.push_back(
        std::make_unique<TransformerBlockT<S>>(config_, slot - 1, allocator_, ops_, tp_, ep));
  }
  if (last_ == config_.numLayers + 2) head_.emplace(config_, allocator_, ops_);
  for (const auto& block : blocks_) {
    if (block->moe()) moeStats_.push_back({.block = block->index()});
  }
}

template <class S>
Result<std::unique_ptr<GptModelT<S>>> GptModelT<S>::create(const layout::ModelConfig& config,
                                                           Allocator* allocator, LayerRange range,
                                                           TensorParallelGroup* tp,
                                                           ExpertParallelGroup* ep) {
  BS_RETURN_IF_ERROR(validate(config, range, tp, ep));
  const int32_t last = range.last < 0 ? config.numLayers + 2 : range.last;
  std::unique_ptr<Backend> owned;
  if constexpr (std::is_same_v<S, float>) owned = std::make_unique<CpuBackend>();
  Backend* backend = owned.get();
  return std::unique_ptr<GptModelT<S>>(
      new GptModelT<S>(config, allocator, std::move(owned), backend, range.first, last, tp, ep));
}

template <class S>
Result<std::unique_ptr<GptModelT<S>>> GptModelT<S>::create(
    const layout::ModelConfig& config, Backend& backend, LayerRange range, TensorParallelGroup* tp,
    ExpertParallelGroup* ep) requires std::is_same_v<S, float> {
  BS_RETURN_IF_ERROR(validate(config, range, tp, ep));
  const int32_t last = range.last < 0 ? config.numLayers + 2 : range.last;
  return std::unique_ptr<GptModelT<S>>(
      new GptModelT<S>(config, &backend.allocator(), nullptr, &backend, range.first, last, tp, ep));
}

template <class S>
Status GptModelT<S>::validate(const layout::ModelConfig& config, LayerRange range,
                              TensorParallelGroup* tp, ExpertParallelGroup* ep) {
  BS_RETURN_IF_ERROR(layout::validate(config));
  const int32_t epSize = ep ? ep->size() : 1;
  if (epSize > 1) {
    if (!config.hasMoe() || config.experts % epSize != 0) {
      return Status::invalidArgument("expert parallelism ep " + std::to_string(epSize) +
                                     " needs a mixture-of-experts model whose experts it divides "
                                     "(experts " +
                                     std::to_string(config.experts) + ")");
    }
    if (!std::is_same_v<S, float>) {
      return Status::invalidArgument("expert parallelism runs in float only");
    }
  }
  const int32_t p = tp ? tp->size() : 1;
  if (p < 1 || config.numHeads % p != 0 || config.mlpHidden() % p != 0) {
    return Status::invalidArgument("tp " + std::to_string(p) + " must divide the " +
                                   std::to_string(config.numHeads) + " heads and the MLP size " +
                                   std::to_string(config.mlpHidden()));
  }
  if (config.hasMoe() && p > 1) {
    return Status::invalidArgument("mixture of experts does not support tensor parallelism (tp " +
                                   std::to_string(p) + ")");
  }
  const int32_t slots = config.numLayers + 2;
  const int32_t last = range.last < 0 ? slots : range.last;
  if (range.first < 0 || range.first >= last || last > slots) {
    return Status::invalidArgument("layer range [" + std::to_string(range.first) + ", " +
                                   std::to_string(last) + ") is empty or outside the model's " +
                                   std::to_string(slots) + " layer slots");
  }
  return Status::ok();
}

template <class S>
std::vector<ParameterT<S>*> GptModelT<S>::parameters() {
  std::vector<ParameterT<S>*> all;
  if (embedding_) {
    for (auto* p : embedding_->parameters()) all.push_back(p);
  }
  for (auto& block : blocks_) {
    for (auto* p : block->parameters()) all.push_back(p);
  }
  if (head_) {
    for (auto* p : head_->parameters()) all.push_back(p);
  }
  return all;
}

template <class S>
ParameterT<S>* GptModelT<S>::findParameter(std::string_view name) {
  for (auto* p : parameters()) {
    if (p->name == name) return p;
  }
  return nullptr;
}

template <class S>
int64_t GptModelT<S>::parameterCount() {
  int64_t n = 0;
  for (auto* p : parameters()) n += p->value.numel();
  return n;
}

template <class S>
void GptModelT<S>::initialize(uint64_t seed) {
  for (auto* p : parameters()) {
    if (p->value.device() == Device::kHost) {
      p->initialize(seed);
      continue;
    }
    // Device memory: the same values, made on the host and uploaded.
    ParameterT<S> host(p->name, p->fullShape, p->init, p->initStd, p->weightDecay, nullptr,
                       p->shard);
    host.initialize(seed);
    ops_.upload(p->value.data(), host.value.data(), p->value.numel());
  }
}

template <class S>
void GptModelT<S>::zeroGrad() {
  for (auto* p : parameters()) ops_.zero(p->grad);
}

template <class S>
Result<std::unique_ptr<ActivationsT<S>>> GptModelT<S>::newActivations(int64_t b, int64_t t) {
  if (b <= 0 || t <= 0) {
    return Status::invalidArgument("batch size and sequence length must be positive, got B=" +
                                   std::to_string(b) + " T=" + std::to_string(t));
  }
  if (t > config_.seqLen) {
    return Status::invalidArgument("sequence length " + std::to_string(t) +
                                   " exceeds the model's " + std::to_string(config_.seqLen));
  }
  // Block tensors past the layer norms hold this tp rank's heads and MLP share.
  const int64_t p = tpSize(), c = config_.hidden, cl = c / p, f = config_.mlpHidden() / p,
                nh = config_.numHeads / p, v = config_.vocabSize;
  Allocator* al = allocator_;
  auto make = [al](Shape shape) {
    return TensorT<S>(std::move(shape), MemoryCategory::kActivations, al);
  };
  auto acts = std::make_unique<ActivationsT<S>>();
  if (embedding_) acts->tokens = TensorT<int32_t>({b, t}, MemoryCategory::kActivations, al);
  if (head_) acts->targets = TensorT<int32_t>({b, t}, MemoryCategory::kActivations, al);
  acts->batch = b;
  acts->seq = t;
  acts->input = make({b, t, c});
  for (size_t i = 0; i < blocks_.size(); ++i) {
    BlockActivationsT<S> a;
    a.ln1 = make({b, t, c});
    a.ln1Mean = make({b, t});
    a.ln1Rstd = make({b, t});
    a.qkv = make({b, t, 3 * cl});
    a.att = make({b, nh, t, t});
    a.attY = make({b, t, cl});
    a.res1 = make({b, t, c});
    a.ln2 = make({b, t, c});
    a.ln2Mean = make({b, t});
    a.ln2Rstd = make({b, t});
    if (const auto* moe = blocks_[i]->moe()) {
      a.moe = moe->newActivations(b * t, al);
    } else {
      a.fc = make({b, t, f});
      a.fcGelu = make({b, t, f});
    }
    a.out = make({b, t, c});
    acts->blocks.push_back(std::move(a));
  }
  if (head_) {
    acts->head.lnf = make({b, t, c});
    acts->head.lnfMean = make({b, t});
    acts->head.lnfRstd = make({b, t});
    acts->head.probs = make({b, t, v});
    acts->head.losses = make({b, t});
  }
  auto& g = acts->scratch;
  g.dLn = make({b, t, c});
  if (!blocks_.empty()) g.dLn2 = make({b, t, c});
  g.dStreamA = make({b, t, c});
  g.dStreamB = make({b, t, c});
  if (!blocks_.empty()) {
    g.dRes1 = make({b, t, c});
    g.dQkv = make({b, t, 3 * cl});
    g.dAttY = make({b, t, cl});
    g.dAtt = make(ops_.attentionScratchShape(t, nh));
    g.dFc = make({b, t, f});
    g.dFcGelu = make({b, t, f});
  }
  for (const auto& block : blocks_) {
    if (block->moe()) g.moe = block->moe()->newGradKeep(b * t, al);  // one shape for all
  }
  if (!embedding_) acts->inputGrad = make({b, t, c});
  return acts;
}

template <class S>
Result<double> GptModelT<S>::forward(ActivationsT<S>& acts, const StageInputT<S>& input,
                                     const TraceContext& trace) {
  using trace_model::EventKind;
  const int64_t b = acts.batch, t = acts.seq, c = config_.hidden;
  BS_RETURN_IF_ERROR(requireNoPendingWeightGrads(acts, "forward"));
  if (embedding_) {
    BS_RETURN_IF_ERROR(checkTokens(input.tokens, b * t, config_.vocabSize, "input tokens"));
    ops_.uploadIds(acts.tokens.data(), input.tokens.data(), b * t);
    BS_RETURN_IF_ERROR(hooks_ ? hooks_->beforeForward(0) : Status::ok());
    {
      tracer::ScopedSpan span(trace.recorder, trace.span(trace.forwardKind, "embedding"));
      embedding_->forward(acts.input.data(), acts.tokens.data(), b, t);
    }
    BS_RETURN_IF_ERROR(hooks_ ? hooks_->afterForward(0) : Status::ok());
  } else {
    if (static_cast<int64_t>(input.activation.size()) != b * t * c) {
      return Status::invalidArgument("stage input has " + std::to_string(input.activation.size()) +
                                     " values, expected B*T*C = " + std::to_string(b * t * c));
    }
    ops_.copy(acts.input.data(), input.activation.data(), b * t * c);
  }
  const S* x = acts.input.data();
  for (size_t i = 0; i < blocks_.size(); ++i) {
    auto& block = *blocks_[i];
    const int32_t slot = block.index() + 1;
    BS_RETURN_IF_ERROR(hooks_ ? hooks_->beforeForward(slot) : Status::ok());
    {
      // Under tp (an MoE block: under ep) the block records its compute between
      // its collectives itself.
      tracer::ScopedSpan span(
          block.communicates() ? nullptr : trace.recorder,
          trace.span(trace.forwardKind, block.name().c_str(), block.forwardFlops(b, t)));
      BS_RETURN_IF_ERROR(block.forward(x, acts.blocks[i], b, t, trace));
    }
    if (block.moe()) {
      for (auto& stats : moeStats_) {
        if (stats.block == block.index()) stats.add(acts.blocks[i].moe);
      }
    }
    BS_RETURN_IF_ERROR(hooks_ ? hooks_->afterForward(slot) : Status::ok());
    x = acts.blocks[i].out.data();
  }
  acts.loss = std::numeric_limits<double>::quiet_NaN();
  if (head_) {
    BS_RETURN_IF_ERROR(checkTokens(input.targets, b * t, config_.vocabSize, "targets"));
    ops_.uploadIds(acts.targets.data(), input.targets.data(), b * t);
    const int32_t slot = config_.numLayers + 1;
    BS_RETURN_IF_ERROR(hooks_ ? hooks_->beforeForward(slot) : Status::ok());
    {
      tracer::ScopedSpan span(trace.recorder,
                              trace.span(trace.forwardKind, "head", head_->forwardFlops(b, t)));
      BS_ASSIGN_OR_RETURN(acts.loss, head_->forward(x, acts.targets.data(), acts.head, b, t));
    }
    BS_RETURN_IF_ERROR(hooks_ ? hooks_->afterForward(slot) : Status::ok());
  }
  return acts.loss;
}

template <class S>
Status GptModelT<S>::backward(ActivationsT<S>& acts, std::span<const S> outputGrad,
                              double lossScale, const TraceContext& trace) {
  using trace_model::EventKind;
  const int64_t b = acts.batch, t = acts.seq;
  BS_RETURN_IF_ERROR(requireNoPendingWeightGrads(acts, "backward"));
  BS_RETURN_IF_ERROR(checkOutputGrad(acts, outputGrad));
  auto& g = acts.scratch;
  TensorT<S>* dCur = &g.dStreamA;   // gradient of the current layer's output
  TensorT<S>* dNext = &g.dStreamB;  // gradient of its input
  if (head_) {
    ops_.zero(*dCur);
    const int32_t slot = config_.numLayers + 1;
    BS_RETURN_IF_ERROR(hooks_ ? hooks_->beforeBackward(slot) : Status::ok());
    {
      tracer::ScopedSpan span(
          trace.recorder, trace.span(EventKind::kBackward, "head", 2 * head_->forwardFlops(b, t)));
      head_->backward(dCur->data(), acts.output().data(), acts.targets.data(), acts.head, g,
                      lossScale, b, t);
    }
    BS_RETURN_IF_ERROR(hooks_ ? hooks_->afterBackward(slot) : Status::ok());
  } else {
    ops_.copy(dCur->data(), outputGrad.data(), dCur->numel());
  }
  for (size_t i = blocks_.size(); i-- > 0;) {
    auto& block = *blocks_[i];
    const S* x = i == 0 ? acts.input.data() : acts.blocks[i - 1].out.data();
    const int32_t slot = block.index() + 1;
    BS_RETURN_IF_ERROR(hooks_ ? hooks_->beforeBackward(slot) : Status::ok());
    {
      tracer::ScopedSpan span(
          block.communicates() ? nullptr : trace.recorder,
          trace.span(EventKind::kBackward, block.name().c_str(), 2 * block.forwardFlops(b, t)));
      ops_.zero(*dNext);
      BS_RETURN_IF_ERROR(block.backward(dNext->data(), dCur->data(), x, acts.blocks[i], g, b, t,
                                        lossScale, trace));
    }
    BS_RETURN_IF_ERROR(hooks_ ? hooks_->afterBackward(slot) : Status::ok());
    std::swap(dCur, dNext);
  }
  if (embedding_) {
    BS_RETURN_IF_ERROR(hooks_ ? hooks_->beforeBackward(0) : Status::ok());
    {
      tracer::ScopedSpan span(trace.recorder, trace.span(EventKind::kBackward, "embedding"));
      embedding_->backward(dCur->data(), acts.tokens.data(), b, t);
    }
    BS_RETURN_IF_ERROR(hooks_ ? hooks_->afterBackward(0) : Status::ok());
  } else {
    ops_.copy(acts.inputGrad.data(), dCur->data(), dCur->numel());
  }
  return Status::ok();
}

template <class S>
Status GptModelT<S>::checkOutputGrad(const ActivationsT<S>& acts,
                                     std::span<const S> outputGrad) const {
  const int64_t expected = acts.batch * acts.seq * config_.hidden;
  if (head_ && !outputGrad.empty()) {
    return Status::invalidArgument("a range ending with the head takes no output gradient");
  }
  if (!head_ && static_cast<int64_t>(outputGrad.size()) != expected) {
    return Status::invalidArgument("output gradient has " + std::to_string(outputGrad.size()) +
                                   " values, expected B*T*C = " + std::to_string(expected));
  }
  return Status::ok();
}

template <class S>
void GptModelT<S>::allocateKeep(ActivationsT<S>& acts) {
  auto& keep = acts.keep;
  if (keep.allocated) return;
  const int64_t b = acts.batch, t = acts.seq, c = config_.hidden, cl = c / tpSize(),
                f = config_.mlpHidden() / tpSize();
  Allocator* al = allocator_;
  auto make = [al](Shape shape) {
    return TensorT<S>(std::move(shape), MemoryCategory::kActivations, al);
  };
  for (size_t i = 0; i < blocks_.size(); ++i) {
    BlockGradKeepT<S> k;
    k.dOut = make({b, t, c});
    if (const auto* moe = blocks_[i]->moe()) {
      k.moe = moe->newGradKeep(b * t, al);
    } else {
      k.dFc = make({b, t, f});
    }
    k.dRes1 = make({b, t, c});
    k.dQkv = make({b, t, 3 * cl});
    k.dLn2 = make({b, t, c});
    k.dLn1 = make({b, t, c});
    keep.blocks.push_back(std::move(k));
  }
  if (head_) keep.dLnf = make({b, t, c});
  if (embedding_) keep.dEmbedding = make({b, t, c});
  keep.allocated = true;
}

namespace {
template <class S>
BlockGradsT<S> gradsOf(BlockGradKeepT<S>& k, double lossScale = 1.0) {
  return {k.dFc.data(),  k.dRes1.data(), k.dQkv.data(), k.dLn2.data(),
          k.dLn1.data(), &k.moe,         lossScale};
}
}  // namespace

template <class S>
Status GptModelT<S>::backwardInput(ActivationsT<S>& acts, std::span<const S> outputGrad,
                                   double lossScale, const TraceContext& trace) {
  using trace_model::EventKind;
  const int64_t b = acts.batch, t = acts.seq;
  BS_RETURN_IF_ERROR(requireNoPendingWeightGrads(acts, "backwardInput"));
  BS_RETURN_IF_ERROR(checkOutputGrad(acts, outputGrad));
  allocateKeep(acts);
  auto& keep = acts.keep;
  // Each layer writes the gradient of its input straight where W (or the
  // previous stage) reads it: the previous block's kept dOut, the
  // embedding's kept gradient, or acts.inputGrad.
  auto inputGradOf = [&](size_t block) -> TensorT<S>& {
    if (block > 0) return keep.blocks[block - 1].dOut;
    return embedding_ ? keep.dEmbedding : acts.inputGrad;
  };
  if (head_) {
    TensorT<S>& dx = inputGradOf(blocks_.size());
    ops_.zero(dx);
    const int32_t slot = config_.numLayers + 1;
    BS_RETURN_IF_ERROR(hooks_ ? hooks_->beforeBackwardInput(slot) : Status::ok());
    {
      tracer::ScopedSpan span(
          trace.recorder, trace.span(EventKind::kBackwardInput, "head", head_->forwardFlops(b, t)));
      head_->backwardInput(dx.data(), keep.dLnf.data(), acts.output().data(), acts.targets.data(),
                           acts.head, lossScale, b, t);
    }
    BS_RETURN_IF_ERROR(hooks_ ? hooks_->afterBackwardInput(slot) : Status::ok());
  } else {
    TensorT<S>& dx = inputGradOf(blocks_.size());
    ops_.copy(dx.data(), outputGrad.data(), dx.numel());
  }
  for (size_t i = blocks_.size(); i-- > 0;) {
    auto& block = *blocks_[i];
    const S* x = i == 0 ? acts.input.data() : acts.blocks[i - 1].out.data();
    TensorT<S>& dx = inputGradOf(i);
    ops_.zero(dx);
    const int32_t slot = block.index() + 1;
    BS_RETURN_IF_ERROR(hooks_ ? hooks_->beforeBackwardInput(slot) : Status::ok());
    {
      const int64_t flops = 2 * block.forwardFlops(b, t) - block.weightGradFlops(b, t);
      tracer::ScopedSpan span(block.communicates() ? nullptr : trace.recorder,
                              trace.span(EventKind::kBackwardInput, block.name().c_str(), flops));
      BS_RETURN_IF_ERROR(block.backwardInput(dx.data(), keep.blocks[i].dOut.data(), x,
                                             acts.blocks[i], acts.scratch,
                                             gradsOf(keep.blocks[i], lossScale), b, t, trace));
    }
    BS_RETURN_IF_ERROR(hooks_ ? hooks_->afterBackwardInput(slot) : Status::ok());
  }
  acts.weightGradPending = true;
  return Status::ok();
}

template <class S>
Status GptModelT<S>::backwardWeight(ActivationsT<S>& acts, const TraceContext& trace) {
  using trace_model::EventKind;
  const int64_t b = acts.batch, t = acts.seq;
  if (!acts.weightGradPending) {
    return Status::failedPrecondition("backwardWeight without a backwardInput before it");
  }
  auto& keep = acts.keep;
  if (head_) {
    const int32_t slot = config_.numLayers + 1;
    BS_RETURN_IF_ERROR(hooks_ ? hooks_->beforeBackwardWeight(slot) : Status::ok());
    {
      tracer::ScopedSpan span(trace.recorder, trace.span(EventKind::kBackwardWeight, "head",
                                                         head_->forwardFlops(b, t)));
      head_->backwardWeight(keep.dLnf.data(), acts.output().data(), acts.head, b, t);
    }
    BS_RETURN_IF_ERROR(hooks_ ? hooks_->afterBackwardWeight(slot) : Status::ok());
  }
  for (size_t i = blocks_.size(); i-- > 0;) {
    auto& block = *blocks_[i];
    const S* x = i == 0 ? acts.input.data() : acts.blocks[i - 1].out.data();
    const int32_t slot = block.index() + 1;
    BS_RETURN_IF_ERROR(hooks_ ? hooks_->beforeBackwardWeight(slot) : Status::ok());
    {
      tracer::ScopedSpan span(trace.recorder,
                              trace.span(EventKind::kBackwardWeight, block.name().c_str(),
                                         block.weightGradFlops(b, t)));
      block.backwardWeight(keep.blocks[i].dOut.data(), x, acts.blocks[i], gradsOf(keep.blocks[i]),
                           b, t);
    }
    BS_RETURN_IF_ERROR(hooks_ ? hooks_->afterBackwardWeight(slot) : Status::ok());
  }
  if (embedding_) {
    BS_RETURN_IF_ERROR(hooks_ ? hooks_->beforeBackwardWeight(0) : Status::ok());
    {
      tracer::ScopedSpan span(trace.recorder, trace.span(EventKind::kBackwardWeight, "embedding"));
      embedding_->backward(keep.dEmbedding.data(), acts.tokens.data(), b, t);
    }
    BS_RETURN_IF_ERROR(hooks_ ? hooks_->afterBackwardWeight(0) : Status::ok());
  }
  acts.weightGradPending = false;
  return Status::ok();
}

template <class S>
int32_t GptModelT<S>::slotOf(const ParameterT<S>* param) {
  if (embedding_) {
    for (auto* p : embedding_->parameters()) {
      if (p == param) return 0;
    }
  }
  for (auto& block : blocks_) {
    for (auto* p : block->parameters()) {
      if (p == param) return block->index() + 1;
    }
  }
  if (head_) {
    for (auto* p : head_->parameters()) {
      if (p == param) return config_.numLayers + 1;
    }
  }
  return -1;
}

template <class S>
bool GptModelT<S>::communicatesInPasses() const {
  for (const auto& block : blocks_) {
    if (block->communicates()) return true;
  }
  return false;
}

template <class S>
std::vector<MoeBlockStats> GptModelT<S>::takeMoeStats() {
  std::vector<MoeBlockStats> taken = moeStats_;
  for (auto& stats : moeStats_) stats = {.block = stats.block};
  return taken;
}

template <class S>
int64_t GptModelT<S>::forwardFlops(int64_t b, int64_t t) const {
  int64_t flops = 0;
  for (const auto& block : blocks_) flops += block->forwardFlops(b, t);
  if (head_) flops += head_->forwardFlops(b, t);
  return flops;
}

template class GptModelT<float>;
template class GptModelT<double>;

}  // namespace bubblescope::engine
