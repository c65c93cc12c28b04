// The three kinds of layers of the GPT-style decoder. GptModelT chains them;
// a pipeline stage holds a contiguous range of them.
//
// Contract: each layer owns its parameters (named, full shape). forward()
// overwrites the layer's activations; backward() adds into its parameters'
// gradients and into the gradient of its input (see cpu_kernels.h).
#pragma once

#include <string>
#include <vector>

#include "engine/gpt_activations.h"
#include "engine/layout/model_config.h"
#include "engine/parameter.h"

namespace bubblescope::engine {

// Token and position embeddings: tokens (B, T) -> x (B, T, C).
template <class S>
class EmbeddingLayerT {
 public:
  EmbeddingLayerT(const layout::ModelConfig& config, Allocator* allocator);
  const std::string& name() const { return name_; }
  std::vector<ParameterT<S>*> parameters() { return {&wte_, &wpe_}; }
  void forward(S* out, const int32_t* tokens, int64_t b, int64_t t) const;  // out (B, T, C)
  void backward(const S* dout, const int32_t* tokens, int64_t b, int64_t t);
  int64_t forwardFlops(int64_t, int64_t) const { return 0; }

 private:
  layout::ModelConfig config_;
  std::string name_ = "embedding";
  ParameterT<S> wte_;  // (V, C) "wte.weight"
  ParameterT<S> wpe_;  // (maxT, C) "wpe.weight"
};

// Where a block's backwardInput() leaves the gradients its backwardWeight()
// reads (shapes as in BlockGradKeepT; dOut is passed separately).
template <class S>
struct BlockGradsT {
  S* dFc = nullptr;    // (B, T, F)
  S* dRes1 = nullptr;  // (B, T, C)
  S* dQkv = nullptr;   // (B, T, 3C)
  S* dLn2 = nullptr;   // (B, T, C)
  S* dLn1 = nullptr;   // (B, T, C)
};

// One pre-norm block: x + attn(ln1(x)), then + mlp(ln2(.)).
//
// Backward comes in two halves over the same sequence of kernels (zero-bubble
// "B" and "W", Qi et al., arXiv 2401.10241): backwardInput() computes the
// gradient of the input and keeps the gradients of the layers' outputs;
// backwardWeight() turns those into the parameters' gradients. backward() is
// the two in a row, so the split adds nothing to its results.
template <class S>
class TransformerBlockT {
 public:
  TransformerBlockT(const layout::ModelConfig& config, int32_t index, Allocator* allocator);
  const std::string& name() const { return name_; }  // "h.<index>"
  int32_t index() const { return index_; }
  std::vector<ParameterT<S>*> parameters();
  // x (B, T, C) -> acts.out (B, T, C).
  void forward(const S* x, BlockActivationsT<S>& acts, int64_t b, int64_t t) const;
  // dx (B, T, C) += gradient of x given dout (B, T, C) (dout is not modified);
  // parameter gradients += theirs. Uses scratch for what B keeps for W.
  void backward(S* dx, const S* dout, const S* x, BlockActivationsT<S>& acts,
                BackwardScratchT<S>& scratch, int64_t b, int64_t t);
  // B: dx (B, T, C) += gradient of x; overwrites `keep`. Reads the parameter
  // values, writes no parameter gradient.
  void backwardInput(S* dx, const S* dout, const S* x, const BlockActivationsT<S>& acts,
                     BackwardScratchT<S>& scratch, const BlockGradsT<S>& keep, int64_t b,
                     int64_t t) const;
  // W: parameter gradients += theirs, from dout, x, the activations and
  // `keep` as backwardInput() left them. Reads no parameter value.
  void backwardWeight(const S* dout, const S* x, const BlockActivationsT<S>& acts,
                      const BlockGradsT<S>& keep, int64_t b, int64_t t);
  // FLOPs of backwardWeight() (the matrix products); backwardInput() does the
  // rest of the 2 × forwardFlops() of a backward.
  int64_t weightGradFlops(int64_t b, int64_t t) const;
  int64_t forwardFlops(int64_t b, int64_t t) const;

 private:
  layout::ModelConfig config_;
  int32_t index_;
  std::string name_;
  ParameterT<S> ln1Weight_, ln1Bias_;        // (C), (C)
  ParameterT<S> qkvWeight_, qkvBias_;        // (3C, C), (3C)
  ParameterT<S> projWeight_, projBias_;      // (C, C), (C)
  ParameterT<S> ln2Weight_, ln2Bias_;        // (C), (C)
  ParameterT<S> fcWeight_, fcBias_;          // (F, C), (F)
  ParameterT<S> fcProjWeight_, fcProjBias_;  // (C, F), (C)
};

// Final layer norm, output projection to the vocabulary, softmax cross-entropy.
template <class S>
class OutputHeadT {
 public:
  OutputHeadT(const layout::ModelConfig& config, Allocator* allocator);
  const std::string& name() const { return name_; }
  std::vector<ParameterT<S>*> parameters() { return {&lnfWeight_, &lnfBias_, &lmHead_}; }
  // x (B, T, C), targets (B, T) -> acts.losses (B, T); returns the mean loss.
  double forward(const S* x, const int32_t* targets, HeadActivationsT<S>& acts, int64_t b,
                 int64_t t) const;
  // dx (B, T, C) += gradient of (lossScale · mean loss) with respect to x;
  // parameter gradients += theirs. Consumes acts.probs. B then W (below).
  void backward(S* dx, const S* x, const int32_t* targets, HeadActivationsT<S>& acts,
                BackwardScratchT<S>& scratch, double lossScale, int64_t b, int64_t t);
  // B: dx += gradient of x; acts.probs become dlogits and dLnf (B, T, C) is
  // overwritten with the gradient of ln_f's output, both kept for W.
  void backwardInput(S* dx, S* dLnf, const S* x, const int32_t* targets, HeadActivationsT<S>& acts,
                     double lossScale, int64_t b, int64_t t) const;
  // W: parameter gradients += theirs from dLnf, x and acts.probs (dlogits).
  void backwardWeight(const S* dLnf, const S* x, const HeadActivationsT<S>& acts, int64_t b,
                      int64_t t);
  int64_t forwardFlops(int64_t b, int64_t t) const;

 private:
  layout::ModelConfig config_;
  std::string name_ = "head";
  ParameterT<S> lnfWeight_, lnfBias_;  // (C), (C) "ln_f.weight", "ln_f.bias"
  ParameterT<S> lmHead_;               // (V, C) "lm_head.weight"
};

}  // namespace bubblescope::engine
