// GptModelT<S>: the GPT-style decoder, or a contiguous range of its layers.
//
// Layer slots: 0 is the embedding, 1..L the transformer blocks h.0..h.{L-1},
// L+1 the output head (final layer norm, projection, cross-entropy). A model
// built for [first, last) holds only those slots' parameters, so a pipeline
// stage is just a range; the full model is [0, L+2).
//
// Tensor parallelism: given a tp group (tensor_parallel.h), every block holds
// its tp rank's slices (gpt_layers.h) and its activations are sized for its
// heads and MLP share; the embedding and the head stay replicated.
//
// Compute: the float model runs every op of its layers and passes on a
// Backend (engine/backend.h, through layer_ops.h): the one given to
// create(), or, with the Allocator overload, a CpuBackend the model owns (so
// callers that only have a host allocator keep working, bit for bit as
// before). The double model (the finite-difference reference) calls the CPU
// kernels directly.
//
// Contract: not thread-safe; one model per rank thread. Parameters and
// activations are allocated from the Allocator given to create() (the
// backend's allocator with the Backend overload), which must outlive the
// model and its activations; a given Backend must outlive the model too.
// Tensors are in the backend's memory: spans handed to forward()/backward()
// as activations or gradients (StageInputT::activation, outputGrad) point
// into it as well; token ids and targets are host spans (uploaded). Gradients accumulate across
// backward() (or backwardWeight()) calls until zeroGrad() (gradient
// accumulation).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/result.h"
#include "engine/expert_parallel.h"
#include "engine/gpt_activations.h"
#include "engine/gpt_layers.h"
#include "engine/layer_hooks.h"
#include "engine/layer_ops.h"
#include "engine/layout/model_config.h"
#include "engine/tensor_parallel.h"
#include "engine/trace_context.h"

namespace bubblescope::engine {

// Layer slots [first, last); last = -1 means "to the end" (L + 2).
struct LayerRange {
  int32_t first = 0;
  int32_t last = -1;
};

// What forward() consumes. Exactly one of tokens / activation, depending on
// whether the range starts with the embedding; targets iff it ends with the head.
template <class S>
struct StageInputT {
  std::span<const int32_t> tokens;   // (B, T) token ids in [0, V)
  std::span<const S> activation;     // (B, T, C) output of the previous stage
  std::span<const int32_t> targets;  // (B, T) next-token ids in [0, V)
};

template <class S>
class GptModelT {
 public:
  // Validates the config and the range (and that tp's size divides the heads
  // and the MLP width, ep's the experts); allocates parameters (zeros until
  // initialize()). `tp`: the tensor-parallel group (null: none); `ep`: the
  // expert-parallel group of the MoE blocks (null: none; float only, no tp,
  // each MoE block then holds only its ep rank's experts, moe_layer.h); not
  // owned, must outlive the model.
  // Computes on a CpuBackend of its own (float), allocating from `allocator`.
  static Result<std::unique_ptr<GptModelT>> create(const layout::ModelConfig& config,
                                                   Allocator* allocator, LayerRange range = {},
                                                   TensorParallelGroup* tp = nullptr,
                                                   ExpertParallelGroup* ep = nullptr);
  // Computes on `backend` (not owned) and allocates from backend.allocator().
  // Float only (the double model has no backend).
  static Result<std::unique_ptr<GptModelT>> create(
      const layout::ModelConfig& config, Backend& backend, LayerRange range = {},
      TensorParallelGroup* tp = nullptr,
      ExpertParallelGroup* ep = nullptr) requires std::is_same_v<S, float>;

  const layout::ModelConfig& config() const { return config_; }
  int32_t firstSlot() const { return first_; }
  int32_t lastSlot() const { return last_; }  // exclusive
  int32_t slotCount() const { return config_.numLayers + 2; }
  bool hasEmbedding() const { return embedding_.has_value(); }
  bool hasHead() const { return head_.has_value(); }
  int32_t tpSize() const { return tp_ ? tp_->size() : 1; }
  // Whether forward and backward block on collectives inside blocks (tp
  // all-reduces, MoE all-to-alls under ep): the blocks then record their
  // compute between them and no enclosing compute span may be recorded.
  bool communicatesInPasses() const;
  // The backend the float model computes on (null for double).
  Backend* backend() const { return ops_.backend(); }

  // The range's parameters in canonical order (embedding, h.0 .. h.L-1, head).
  std::vector<ParameterT<S>*> parameters();
  ParameterT<S>* findParameter(std::string_view name);  // null if not held
  int64_t parameterCount();                             // elements held by this range

  // Deterministic: equal seeds give equal weights for every parameter, in
  // every range that holds it (a tp shard: its slice of the full tensor), on
  // every backend (parameters in device memory are initialised on the host
  // and uploaded).
  void initialize(uint64_t seed);
  void zeroGrad();

  // Buffers for one micro-batch of B sequences of T <= seqLen tokens.
  Result<std::unique_ptr<ActivationsT<S>>> newActivations(int64_t b, int64_t t);

  // Runs the range forward. Returns the mean loss when the range ends with the
  // head, NaN otherwise (then acts.output() (B, T, C) is the stage output).
  // One span per layer, of kind trace.forwardKind; under tp a block records
  // one span per stretch between its all-reduces instead (a blocking
  // all-reduce never sits inside a compute span; the same for backward).
  Result<double> forward(ActivationsT<S>& acts, const StageInputT<S>& input,
                         const TraceContext& trace = {});
  // Runs the range backward after forward(acts). With the head, the gradient
  // is that of lossScale · mean loss and outputGrad must be empty; otherwise
  // outputGrad (B, T, C) is the gradient of the stage output. Without the
  // embedding, acts.inputGrad (B, T, C) receives the gradient of the input.
  // One span EventKind::kBackward per layer.
  Status backward(ActivationsT<S>& acts, std::span<const S> outputGrad, double lossScale = 1.0,
                  const TraceContext& trace = {});

  // backward() in two halves (zero-bubble B and W, Qi et al., arXiv
  // 2401.10241). backwardInput() takes what backward() takes and produces
  // acts.inputGrad (without the embedding); it writes no parameter gradient
  // but keeps the gradients of the layers' outputs in acts.keep (allocated
  // on first use, kActivations). backwardWeight() then adds every parameter
  // gradient. B then W gives what backward() gives, bit for bit. Between the
  // two, acts must not be reused: forward(), backward() and a second
  // backwardInput() over them fail until backwardWeight() ran. One span per
  // layer, EventKind::kBackwardInput resp. kBackwardWeight; hooks as in
  // layer_hooks.h.
  Status backwardInput(ActivationsT<S>& acts, std::span<const S> outputGrad, double lossScale = 1.0,
                       const TraceContext& trace = {});
  Status backwardWeight(ActivationsT<S>& acts, const TraceContext& trace = {});

  // FLOPs of one forward over (B, T) for this range on this rank (its tp
  // share of the blocks; backward is about 2x).
  int64_t forwardFlops(int64_t b, int64_t t) const;

  // The MoE blocks' routing counts since the last call (one entry per MoE
  // block of the range, in block order; empty for a dense model), and resets them.
  std::vector<MoeBlockStats> takeMoeStats();

  // Called around every slot of forward() and the backward passes (layer_hooks.h);
  // null: none. Not owned; must outlive the passes that use it.
  void setHooks(LayerHooks* hooks) { hooks_ = hooks; }
  // The slot a parameter of this range belongs to (-1 if not held).
  int32_t slotOf(const ParameterT<S>* param);

 private:
  GptModelT(const layout::ModelConfig& config, Allocator* allocator,
            std::unique_ptr<Backend> ownedBackend, Backend* backend, int32_t first, int32_t last,
            TensorParallelGroup* tp, ExpertParallelGroup* ep);
  static Status validate(const layout::ModelConfig& config, LayerRange range,
                         TensorParallelGroup* tp, ExpertParallelGroup* ep);
  Status checkOutputGrad(const ActivationsT<S>& acts, std::span<const S> outputGrad) const;
  void allocateKeep(ActivationsT<S>& acts);

  layout::ModelConfig config_;
  Allocator* allocator_;
  std::unique_ptr<Backend> ownedBackend_;  // the CpuBackend of the Allocator overload (float)
  LayerOpsT<S> ops_;
  int32_t first_;
  int32_t last_;
  TensorParallelGroup* tp_;
  std::optional<EmbeddingLayerT<S>> embedding_;
  std::vector<std::unique_ptr<TransformerBlockT<S>>> blocks_;
  std::optional<OutputHeadT<S>> head_;
  LayerHooks* hooks_ = nullptr;
  std::vector<MoeBlockStats> moeStats_;  // per MoE block, since takeMoeStats()
};

using GptModel = GptModelT<float>;
using StageInput = StageInputT<float>;

}  // namespace bubblescope::engine
