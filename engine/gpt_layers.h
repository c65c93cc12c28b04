// The three kinds of layers of the GPT-style decoder. GptModelT chains them;
// a pipeline stage holds a contiguous range of them.
//
// Contract: each layer owns its parameters (named; full shape, or under
// tensor parallelism the tp rank's slice) and computes through the LayerOpsT
// it is given (layer_ops.h: the model's Backend for float, the CPU kernels
// for double); every pointer it is handed lives in that memory. forward() overwrites the layer's
// activations; backward() adds into its parameters' gradients and into the
// gradient of its input (see cpu_kernels.h).
//
// Tensor parallelism (Megatron-LM, arXiv 1909.08053), blocks only: with a tp
// group of size P, attention's QKV projection is column-parallel by heads
// (rank r holds the Q, K and V rows of heads r·NH/P .. (r+1)·NH/P − 1:
// weight (3C/P, C), bias (3C/P)), attention runs on those heads, and the
// output projection is row-parallel (weight (C, C/P)); the MLP's fc is
// column-parallel (F/P, C), GELU local, its projection row-parallel (C, F/P).
// Each sub-block's exit sums the partial outputs over tp (forward all-reduce;
// the row-parallel bias, replicated, is added once after it) and its entry
// sums the partial gradients of the layer-norm output (backward all-reduce,
// in B: W needs no communication): two all-reduces of (B, T, C) forward and
// two backward per block. Layer norms, embeddings, the head and the
// row-parallel biases are replicated; their gradients come from replicated
// tensors and so are equal on every tp rank.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/compute_segments.h"
#include "engine/gpt_activations.h"
#include "engine/layer_ops.h"
#include "engine/layout/model_config.h"
#include "engine/moe_layer.h"
#include "engine/parameter.h"
#include "engine/tensor_parallel.h"
#include "engine/trace_context.h"
#include "trace_model/event.h"

namespace bubblescope::engine {

// Token and position embeddings: tokens (B, T) -> x (B, T, C).
template <class S>
class EmbeddingLayerT {
 public:
  EmbeddingLayerT(const layout::ModelConfig& config, Allocator* allocator, LayerOpsT<S> ops);
  const std::string& name() const { return name_; }
  std::vector<ParameterT<S>*> parameters() { return {&wte_, &wpe_}; }
  void forward(S* out, const int32_t* tokens, int64_t b, int64_t t) const;  // out (B, T, C)
  void backward(const S* dout, const int32_t* tokens, int64_t b, int64_t t);
  int64_t forwardFlops(int64_t, int64_t) const { return 0; }

 private:
  layout::ModelConfig config_;
  LayerOpsT<S> ops_;
  std::string name_ = "embedding";
  ParameterT<S> wte_;  // (V, C) "wte.weight"
  ParameterT<S> wpe_;  // (maxT, C) "wpe.weight"
};

// Where a block's backwardInput() leaves the gradients its backwardWeight()
// reads (shapes as in BlockGradKeepT; dOut is passed separately).
template <class S>
struct BlockGradsT {
  S* dFc = nullptr;                // (B, T, F/P)
  S* dRes1 = nullptr;              // (B, T, C)
  S* dQkv = nullptr;               // (B, T, 3C/P)
  S* dLn2 = nullptr;               // (B, T, C)
  S* dLn1 = nullptr;               // (B, T, C)
  MoeGradKeepT<S>* moe = nullptr;  // an MoE block's kept gradients
  double lossScale = 1.0;  // an MoE block's aux loss gradient is that of lossScale · α · aux
};

// One pre-norm block: x + attn(ln1(x)), then + mlp(ln2(.)); in an MoE
// block (ModelConfig::isMoeBlock) the MLP is a MoeFeedForwardT (moe_layer.h).
//
// Backward comes in two halves over the same sequence of kernels (zero-bubble
// "B" and "W", Qi et al., arXiv 2401.10241): backwardInput() computes the
// gradient of the input and keeps the gradients of the layers' outputs;
// backwardWeight() turns those into the parameters' gradients. backward() is
// the two in a row, so the split adds nothing to its results.
template <class S>
class TransformerBlockT {
 public:
  // `tp`: the tensor-parallel group (null: none); the model checked that its
  // size divides the heads and the MLP width. `ep`: an MoE block's
  // expert-parallel group (null: none); its size divides E.
  TransformerBlockT(const layout::ModelConfig& config, int32_t index, Allocator* allocator,
                    LayerOpsT<S> ops, TensorParallelGroup* tp = nullptr,
                    ExpertParallelGroup* ep = nullptr);
  const std::string& name() const { return name_; }  // "h.<index>"
  int32_t index() const { return index_; }
  std::vector<ParameterT<S>*> parameters();
  // The MoE feed-forward of an MoE block; null in a dense block.
  const MoeFeedForwardT<S>* moe() const { return moe_.get(); }
  // Whether its passes block on collectives (tp all-reduces, MoE
  // all-to-alls): it then records its compute between them itself.
  bool communicates() const { return tpSize() > 1 || (moe_ && moe_->communicates()); }
  // x (B, T, C) -> acts.out (B, T, C). `trace` tags the tp all-reduces (and,
  // under tp, the block's own compute spans, of kind trace.forwardKind).
  Status forward(const S* x, BlockActivationsT<S>& acts, int64_t b, int64_t t,
                 const TraceContext& trace = {}) const;
  // dx (B, T, C) += gradient of x given dout (B, T, C) (dout is not modified);
  // parameter gradients += theirs. Uses scratch for what B keeps for W.
  // `lossScale`: that of the step's loss (an MoE block's aux loss gradient).
  Status backward(S* dx, const S* dout, const S* x, BlockActivationsT<S>& acts,
                  BackwardScratchT<S>& scratch, int64_t b, int64_t t, double lossScale = 1.0,
                  const TraceContext& trace = {});
  // B: dx (B, T, C) += gradient of x; overwrites `keep`. Reads the parameter
  // values, writes no parameter gradient. Holds the block's two backward tp
  // all-reduces (keep.dLn2 and keep.dLn1 are left summed over tp).
  Status backwardInput(S* dx, const S* dout, const S* x, const BlockActivationsT<S>& acts,
                       BackwardScratchT<S>& scratch, const BlockGradsT<S>& keep, int64_t b,
                       int64_t t, const TraceContext& trace = {}) const;
  // W: parameter gradients += theirs, from dout, x, the activations and
  // `keep` as backwardInput() left them. Reads no parameter value.
  void backwardWeight(const S* dout, const S* x, const BlockActivationsT<S>& acts,
                      const BlockGradsT<S>& keep, int64_t b, int64_t t);
  // FLOPs of backwardWeight() (the matrix products); backwardInput() does the
  // rest of the 2 × forwardFlops() of a backward.
  // All FLOPs are this rank's (its share of the products and heads under tp).
  int64_t weightGradFlops(int64_t b, int64_t t) const;
  int64_t forwardFlops(int64_t b, int64_t t) const;
  int64_t attentionFlops(int64_t b, int64_t t) const;  // forward's attention part
  int64_t mlpFlops(int64_t b, int64_t t) const;        // forward's MLP part

 private:
  int32_t tpSize() const { return tp_ ? tp_->size() : 1; }
  Status backwardInputSegments(S* dx, const S* dout, const S* x, const BlockActivationsT<S>& acts,
                               BackwardScratchT<S>& scratch, const BlockGradsT<S>& keep, int64_t b,
                               int64_t t, const TraceContext& trace,
                               trace_model::EventKind kind) const;
  // out (N, C) = inp (N, IC) · weight^T summed over tp, + bias (replicated);
  // `segment` ends before the all-reduce.
  Status rowParallelForward(S* out, const S* inp, const ParameterT<S>& weight,
                            const ParameterT<S>& bias, int64_t n, int64_t ic, const char* name,
                            const TraceContext& trace, ComputeSegments& segment) const;
  // Sums a partial (N, C) gradient or output over tp (no-op without tp).
  Status reduceOverTp(S* data, int64_t count, const char* name, const TraceContext& trace) const;

  layout::ModelConfig config_;
  LayerOpsT<S> ops_;
  int32_t index_;
  std::string name_;
  TensorParallelGroup* tp_;                  // null: no tensor parallelism
  ParameterT<S> ln1Weight_, ln1Bias_;        // (C), (C)
  ParameterT<S> qkvWeight_, qkvBias_;        // (3C/P, C), (3C/P): [q_r; k_r; v_r]
  ParameterT<S> projWeight_, projBias_;      // (C, C/P), (C)
  ParameterT<S> ln2Weight_, ln2Bias_;        // (C), (C)
  ParameterT<S> fcWeight_, fcBias_;          // (F/P, C), (F/P)
  ParameterT<S> fcProjWeight_, fcProjBias_;  // (C, F/P), (C) (dense blocks)
  std::unique_ptr<MoeFeedForwardT<S>> moe_;  // MoE blocks: replaces fc and its projection
};

// Final layer norm, output projection to the vocabulary, softmax cross-entropy.
template <class S>
class OutputHeadT {
 public:
  OutputHeadT(const layout::ModelConfig& config, Allocator* allocator, LayerOpsT<S> ops);
  const std::string& name() const { return name_; }
  std::vector<ParameterT<S>*> parameters() { return {&lnfWeight_, &lnfBias_, &lmHead_}; }
  // x (B, T, C), targets (B, T) -> acts.losses (B, T); returns the mean loss
  // (read back: a synchronisation point of the backend, whose error it returns).
  Result<double> forward(const S* x, const int32_t* targets, HeadActivationsT<S>& acts, int64_t b,
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
  LayerOpsT<S> ops_;
  std::string name_ = "head";
  ParameterT<S> lnfWeight_, lnfBias_;  // (C), (C) "ln_f.weight", "ln_f.bias"
  ParameterT<S> lmHead_;               // (V, C) "lm_head.weight"
};

}  // namespace bubblescope::engine
