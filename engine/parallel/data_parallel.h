// DataParallel: gradient synchronisation and ZeRO over the data-parallel
// group for one model replica (or one pipeline stage's layer range).
//
// The model's parameters move into flat buffers (flat_layout.h):
// - stage 0: full parameters, gradients and AdamW state on every rank;
//   gradients are all-reduced in buckets (dim dp).
// - stage 1 (ZeRO-1, Rajbhandari et al., arXiv 1910.02054): AdamW state only
//   for this rank's shard; gradient buckets are reduce-scattered, each rank
//   updates its shard, parameters are all-gathered (dim zero).
// - stage 2: gradients sharded too: the full gradient of a layer exists only
//   during its backward and in the bucket being reduced; every micro-batch's
//   buckets are reduce-scattered and added into the shard.
// - stage 3: parameters sharded too: a layer's parameters are all-gathered
//   just before its forward and its backward and freed right after.
// Bytes per rank (fp32 weights and gradients, 8-byte Adam state;
// docs/formulas.md, after ZeRO's Figure 1): 16Ψ, 4Ψ + 4Ψ + 8Ψ/N, 4Ψ + 12Ψ/N, 16Ψ/N.
//
// Buckets (planBuckets) are launched as soon as backward has produced all of
// their gradients (slots run in reverse order) and complete on the
// communicator's worker while backward goes on; without overlap they are
// launched after the micro-batch's backward. Stage 0 and 1 synchronise only
// in the step's last micro-batch (gradients accumulate locally before).
//
// A split backward (zero-bubble B and W, layer_hooks.h): B only reads
// parameters (ZeRO-3 gathers each slot for its B and frees it after); W only
// writes gradients and reads no parameter value, so ZeRO-3 gathers nothing
// for it. A slot's gradients are complete after its W: buckets are filled and
// launched there, exactly as after a fused backward.
//
// Memory: every buffer comes from `allocator` (the model's backend's) and
// every read or write of one is an op of the model's Backend or a collective
// of `dp` (a device rank's dp is a device communicator: device_groups.h).
// Grad compression on a device stages each bucket through host memory: the
// codecs (bucket_reduction.h) are the CPU's, on a host copy, over the host
// communicator `hostDp`; the copies are the Backend's.
//
// Contract: create() after the model is initialised in full shape (the same
// seed on every rank); it installs itself as the model's LayerHooks and must
// outlive the model's passes. The step's calls are GradientSync's
// (gradient_sync.h): stages 0 and 1 reduce once, after the last backward;
// stages 2 and 3 reduce every micro-batch's buckets, launched during its
// backward (W), waited and added into the shard by that micro-batch's
// ReduceScatterGrads op (completeGradients()).
// Collectives over `dp` are issued in the same order on every rank. The
// training thread only; `dp` and `allocator` must outlive this object.
#pragma once

#include <memory>
#include <vector>

#include "engine/adamw.h"
#include "engine/gpt_model.h"
#include "engine/layout/grad_comm.h"
#include "engine/layout/zero_stage.h"
#include "engine/parallel/bucket_reduction.h"
#include "engine/parallel/communicator.h"
#include "engine/parallel/flat_layout.h"
#include "engine/parallel/gradient_sync.h"

namespace bubblescope::engine {

struct DataParallelOptions {
  layout::ZeroStage zeroStage = layout::ZeroStage::kNone;
  bool overlap = true;                          // launch buckets during backward
  int64_t bucketElements = 25 * (1 << 20) / 4;  // 25 MiB of fp32 (PyTorch DDP's default)
  AdamWConfig optimizer;
  // Not none: each bucket is reduced by a BucketReduction (bucket_reduction.h;
  // ZeRO 0 only). none: the plain fp32 all-reduce.
  layout::GradCompressionSpec compression;
  // A host communicator of the dp group (same ranks, same order): on a
  // device backend the codecs of `compression` run on host buffers over it,
  // each bucket staged through the backend (downloaded when it launches,
  // the group's sum uploaded when it completes). Required there when
  // compressing; ignored on the host (the codecs use `dp`). Must outlive
  // this object.
  Communicator* hostDp = nullptr;
  // Adds every bucket's bus bytes, sent and uncompressed (null: not counted;
  // must outlive this object).
  GradTraffic* traffic = nullptr;
  // The parameters this object synchronises (expert parallelism: two
  // objects, expert_data_parallel.h); kExperts names its collectives
  // "expert_<name>" ("expert_grad_all_reduce", ...).
  ParameterGroup group = ParameterGroup::kAll;
  // Both set: every bucket is all-reduced hierarchically over these (the dp
  // group's node communicators, node_groups.h; ZeRO 0, no compression).
  // Must outlive this object.
  Communicator* intraNode = nullptr;
  Communicator* interNode = nullptr;
};

// The dimension a data-parallel group's collectives are traced with: zero
// when ZeRO shards the optimizer (stage >= 1), dp otherwise. Every
// collective DataParallel runs carries it, and the tracer tags the kernels
// on the dp group's device streams with it (cli/gpu_tracing.h).
trace_model::ParallelDim dataParallelDim(layout::ZeroStage stage);

class DataParallel final : public LayerHooks, public GradientSync {
 public:
  static Result<std::unique_ptr<DataParallel>> create(GptModel& model, Allocator& allocator,
                                                      Communicator& dp,
                                                      const DataParallelOptions& options);
  ~DataParallel() override;
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  // GradientSync
  void zeroGradients() override;
  void beginPass(int32_t step, int32_t microBatch) override;
  void beginMicroBatch(int32_t step, int32_t microBatch, bool last) override;
  Status completeGradients() override;
  bool blocksInPasses() const override { return layout::shardsParameters(options_.zeroStage); }
  // In `shared`; reduceGradSquares is collective at stages >= 1 (the
  // shards' sums over dp).
  Result<GradSquares> localGradSquares(bool countReplicated = true) override;
  Result<double> reduceGradSquares(GradSquares local) override;
  void scaleGradients(float factor) override;
  // Updates this rank's shard (local compute; the 1-based count kept here).
  Status applyOptimizer(double lr) override;
  // Stages 1 and 2: all-gather the updated shards so every rank holds every
  // parameter again (collective); a no-op at stages 0 and 3.
  Status gatherUpdatedParameters() override;
  int64_t parameterCount() const override { return flat_.total(); }
  Status appendParameters(NamedValues& out, std::vector<Parameter*>& params) override;
  // Collective at stages >= 1 (the shards of m and v are all-gathered).
  Status appendOptimizerState(NamedValues& m, NamedValues& v, int64_t& steps) override;

  // Launches every bucket and waits for them, as completeGradients() does
  // after the last micro-batch without overlap (benchmarks; collective).
  Status synchronizeAll();

  // Every parameter in flat order (collective at stage 3). Out: total() floats.
  Status gatherParameters(std::vector<float>& out);

  const FlatLayout& flat() const { return flat_; }
  FlatRange shard() const { return shard_; }  // whole buffer at stage 0
  layout::ZeroStage zeroStage() const override { return options_.zeroStage; }
  int64_t optimizerSteps() const { return adamSteps_; }

  // LayerHooks
  Status beforeForward(int32_t slot) override;
  Status afterForward(int32_t slot) override;
  Status beforeBackward(int32_t slot) override;
  Status afterBackward(int32_t slot) override;
  Status beforeBackwardInput(int32_t slot) override;
  Status afterBackwardInput(int32_t slot) override;
  Status beforeBackwardWeight(int32_t slot) override;
  Status afterBackwardWeight(int32_t slot) override;

 private:
  struct Bucket {
    FlatRange range;
    FlatRange piece;  // range ∩ this rank's shard (stages >= 1)
    Tensor send;      // stages 2, 3: the bucket's gradients of this micro-batch
    Tensor recv;      // stages >= 1: this rank's reduced piece
    int64_t filled = 0;
    bool ready = false;
    bool launched = false;
    bool done = false;  // completed in this micro-batch
    CommHandle handle;
    std::vector<float> staged;  // compression on a device: the bucket's host copy
  };

  DataParallel(GptModel& model, Allocator& allocator, Communicator& dp,
               const DataParallelOptions& options);
  Status setUp();
  Status setUpCompression();  // one BucketReduction per bucket when compressing
  Status launchReadyBuckets();
  Status launchBucket(Bucket& bucket);
  Status completeBucket(Bucket& bucket);
  void countTraffic(const Bucket& bucket);
  // What bucket `b`'s BucketReduction reads and writes: its gradients in
  // place, or (compression on a device) its host copy.
  std::span<float> reductionBuffer(Bucket& b);
  bool stagesReductions() const;
  Status openSlotGradients(int32_t slot);    // stages 2, 3: the slot's full gradients
  Status finishSlotGradients(int32_t slot);  // fills and launches the buckets
  Status gatherSlot(int32_t slot);           // stage 3
  void releaseSlot(int32_t slot);            // stage 3
  float* shardGrads();                       // this rank's reduced gradients
  CommTrace trace(const char* name) const;
  Device device() const { return backend_.device(); }
  trace_model::ParallelDim syncDim() const;

  GptModel& model_;
  Allocator& allocator_;
  Backend& backend_;  // the model's: every read and write of the flat buffers
  Communicator& dp_;
  DataParallelOptions options_;
  FlatLayout flat_;
  ShardPlan shards_;
  FlatRange shard_;
  Tensor params_;      // stages 0-2: every parameter; stage 3: the shard
  Tensor grads_;       // stages 0-1: every gradient; stages 2-3: the shard
  Tensor adamM_;       // (shard) first moments
  Tensor adamV_;       // (shard) second moments
  Tensor slotParams_;  // stage 3: the gathered parameters of the running slot
  Tensor slotGrads_;   // stages 2-3: the gradients of the slot in backward
  static constexpr int32_t kMaxBucketsInFlight = 2;  // stages 2, 3
  std::vector<Bucket> buckets_;
  std::vector<std::unique_ptr<BucketReduction>> reductions_;  // [bucket]; empty: uncompressed
  int32_t inFlight_ = 0;                                      // launched, not yet completed
  size_t oldest_ = 0;  // index of the oldest bucket in flight
  int64_t adamSteps_ = 0;
  int32_t step_ = -1;
  int32_t microBatch_ = -1;
  bool lastMicroBatch_ = true;
};

}  // namespace bubblescope::engine
