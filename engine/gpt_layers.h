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

// One pre-norm block: x + attn(ln1(x)), then + mlp(ln2(.)).
template <class S>
class TransformerBlockT {
 public:
  TransformerBlockT(const layout::ModelConfig& config, int32_t index, Allocator* allocator);
  const std::string& name() const { return name_; }  // "h.<index>"
  int32_t index() const { return index_; }
  std::vector<ParameterT<S>*> parameters();
  // x (B, T, C) -> acts.out (B, T, C).
  void forward(const S* x, BlockActivationsT<S>& acts, int64_t b, int64_t t) const;
  // dx (B, T, C) += gradient of x given dout (B, T, C) (dout is not modified).
  void backward(S* dx, const S* dout, const S* x, BlockActivationsT<S>& acts,
                BackwardScratchT<S>& scratch, int64_t b, int64_t t);
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
  // dx (B, T, C) += gradient of (lossScale · mean loss) with respect to x.
  // Consumes acts.probs.
  void backward(S* dx, const S* x, const int32_t* targets, HeadActivationsT<S>& acts,
                BackwardScratchT<S>& scratch, double lossScale, int64_t b, int64_t t);
  int64_t forwardFlops(int64_t b, int64_t t) const;

 private:
  layout::ModelConfig config_;
  std::string name_ = "head";
  ParameterT<S> lnfWeight_, lnfBias_;  // (C), (C) "ln_f.weight", "ln_f.bias"
  ParameterT<S> lmHead_;               // (V, C) "lm_head.weight"
};

}  // namespace bubblescope::engine
