// RankTrainer: the one trainer of a rank, for every layout. It owns the
// rank's Backend, its view of the process groups, the Schedule and the
// ScheduleExecutor that runs this stage's op list each step (forwards,
// backwards, pipeline transfers, the gradient collective and the optimizer
// step: schedule_executor.h). A single process (`bubblescope-cli train`) is
// the 1x1x1 layout: no groups, a one-stage schedule, its gradients and AdamW
// on the Backend (LocalGradients, any device). A parallel rank has a dp group
// (DataParallel per chunk: buckets, ZeRO 0-3, on its Backend) and, when the
// layout says so, tp and pp groups.
//
// The model's layers are split into p·v chunks (stage_split.h: by cost, or the
// layout's explicit split); stage k holds chunks c = 0 .. v − 1 as virtual
// stages c·p + k (Megatron-LM interleaving; v = 1 except for the interleaved
// schedule), the embedding in virtual stage 0 and the head (loss) in virtual
// stage p·v − 1. Each chunk is one GptModel over its slot range, initialised
// in full shape semantics from the run's seed (equal weights to the
// single-rank model's). With p = 1 and v = 1 the one chunk is the whole model.
//
// Global batch (docs/design.md, the engine's correctness rule): one step trains on M × dp
// micro-batches of B sequences. Dp rank d takes the global micro-batch
// indices d·M .. d·M + M − 1 (DataLoader batches depend only on (seed, step,
// index)), so the union over ranks is the batch of a single process with
// M × dp micro-batches (singleRankEquivalent()). Each micro-batch's loss is
// scaled by 1/(M·dp) and gradients are summed over dp, so every rank trains
// on the global mean gradient; clipping uses the global norm; the reported
// loss is the mean over all M·dp micro-batches (summed over pp, then dp).
//
// Expert parallelism: given ep and expertDp groups, each chunk's MoE blocks
// hold this ep rank's experts (moe_layer.h: tokens dispatched and combined
// by all-to-all over ep) and its gradients are synchronised by an
// ExpertDataParallel (experts over expertDp, the rest over dp). Routing and
// capacity are per micro-batch of B sequences on the rank that holds it,
// exactly as in the single process on M × dp micro-batches.
//
// Tensor parallelism: given a tp group, each chunk's blocks hold this tp
// rank's slices (gpt_layers.h); the dp group joins the ranks of one tp
// coordinate, and so does the pp group, so activations and gradients
// (replicated over tp) pass between equal tp ranks. The norm sums squares
// over tp, counting replicated parameters once.
//
// Contract: create() and step() are collective over the groups given (which
// outlive the trainer); every rank of the job calls step() the same number of
// times, and save() at the same point. A single process has no groups at
// all; a parallel rank has at least dp (of any size). loadPath needs a
// single process; save() of a parallel rank a host-memory backend (a single
// process saves and loads on any device: checkpoint.h).
//
// Devices: every layout trains on a device backend (a CudaBackend) when
// its groups move device buffers (engine/parallel/device_groups.h: NCCL, or
// MPI behind host staging).
// Every tensor of a step lives in the backend's memory and every read or
// write of one is a Backend op or a collective of those groups: the
// gradient buckets and ZeRO shards (data_parallel.h), the pipeline's
// transfer buffers (schedule_executor.h), the tp all-reduces, the norm and
// the loss (host doubles summed through allReduceScalar(),
// scalar_all_reduce.h). What the CPU computes on host buffers is staged
// through the backend: grad compression's codecs over `dpHost`
// (data_parallel.h), the MoE layer's routing with its all-to-alls over the
// ep group, which exchanges host buffers (moe_layer.h), and an emulated
// inter-node link's paced group (device_groups.h). Spans go to the Recorder of setRecorder()
// (compute and the communicators'); it must outlive the trainer or be drained first (span names
// point into the model). The training thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "engine/allocator.h"
#include "engine/backend.h"
#include "engine/data_loader.h"
#include "engine/layout/grad_comm.h"
#include "engine/layout/schedule.h"
#include "engine/layout/zero_stage.h"
#include "engine/parallel/bucket_reduction.h"
#include "engine/parallel/communicator.h"
#include "engine/parallel/ep_group.h"
#include "engine/parallel/gradient_sync.h"
#include "engine/parallel/schedule_executor.h"
#include "engine/parallel/tp_group.h"
#include "engine/trainer_options.h"
#include "tracer/recorder.h"

namespace bubblescope::engine {

struct ParallelOptions {
  layout::ZeroStage zeroStage = layout::ZeroStage::kNone;
  bool overlap = true;
  int64_t bucketElements = 25 * (1 << 20) / 4;
  layout::GradCompressionSpec compression;  // of the dp gradient buckets (ZeRO 0)
};

struct PipelineOptions {
  layout::ScheduleKind schedule = layout::ScheduleKind::kOneFOneB;
  int32_t chunks = 1;                // v
  std::vector<int32_t> stageLayers;  // explicit split (p·v entries), empty: by cost
  bool recompute = false;            // activation checkpointing (schedule_executor.h)
};

// The rank's process groups; null: not part of the layout. All null: a
// single process. Otherwise dp is required. Expert parallelism needs ep
// (this rank's ep ranks of the dp group) and expertDp (the dp ranks with the
// same ep rank) together, no tp, and ZeRO 0 or 1. On a device backend ep
// moves host buffers (the MoE layer's all-to-alls: the grid's MPI group) and
// expertDp device buffers (a device group).
struct RankGroups {
  Communicator* dp = nullptr;
  Communicator* pp = nullptr;
  Communicator* tp = nullptr;
  Communicator* ep = nullptr;
  Communicator* expertDp = nullptr;
  // Both set: the dp gradient buckets are all-reduced hierarchically over the
  // dp group's nodes (node_groups.h; ZeRO 0, no compression, no ep).
  Communicator* dpIntraNode = nullptr;
  Communicator* dpInterNode = nullptr;
  // A host communicator of the dp group (a device rank's: the grid's MPI
  // one), for what the rank stages through host memory: the grad codecs'
  // payloads (data_parallel.h). Null: dp itself (a host rank).
  Communicator* dpHost = nullptr;
};

// How a rank trains besides TrainerOptions.
struct RankSetup {
  ParallelOptions parallel;
  PipelineOptions pipeline;
  RankGroups groups;
  std::unique_ptr<Backend> backend;  // null: a CpuBackend
};

// Bytes this rank holds per category, now and at their peak since set-up.
struct MemoryReport {
  int64_t parameters = 0, gradients = 0, optimizer = 0, activations = 0;
  int64_t peakParameters = 0, peakGradients = 0, peakOptimizer = 0, peakActivations = 0;
};
MemoryReport memoryOf(const Allocator& allocator);

// The single-process options that train on the same global batch:
// M × dp micro-batches of B sequences.
TrainerOptions singleRankEquivalent(const TrainerOptions& perRank, int32_t dp);

// The slot range [first, last) of virtual stage `virtualStage` of a split
// (layers per virtual stage): the embedding joins the first, the head the last.
LayerRange pipelineSlots(const std::vector<int32_t>& split, int32_t virtualStage);

class RankTrainer {
 public:
  // `options.microBatches` is M per dp rank, `options.batchSize` B.
  static Result<std::unique_ptr<RankTrainer>> create(const TrainerOptions& options,
                                                     RankSetup setup = {});
  ~RankTrainer();
  RankTrainer(const RankTrainer&) = delete;
  RankTrainer& operator=(const RankTrainer&) = delete;

  // Spans (compute and the communicators') go to `recorder` (null: none).
  void setRecorder(tracer::Recorder* recorder);
  // One optimizer step; loss, gradNorm and tokens are global.
  Result<StepResult> step();
  int64_t completedSteps() const { return step_; }
  // Writes a checkpoint of the current state (checkpoint.h): a parallel
  // rank's is the whole model gathered to dp 0, tp 0, pp 0, which writes it
  // (layout_checkpoint.h; collective), with the settings of the single
  // process on the same global batch. `wrote` (optional): this rank wrote it.
  Status save(const std::string& path, bool* wrote = nullptr);

  const TrainerOptions& options() const { return options_; }  // effective (after a load)
  const ParallelOptions& parallelOptions() const { return parallel_; }
  Backend& backend() { return *backend_; }
  const Allocator& allocator() const { return backend_->allocator(); }
  MemoryReport memory() const { return memoryOf(allocator()); }
  int64_t parameterCount() const;  // this rank's (its stage's chunks, its tp slices)
  int64_t tokensPerStep() const;   // over the whole job
  const std::string& dataSource() const { return dataSource_; }
  int64_t dataTokenCount() const { return loader_->tokenCount(); }

  // Bus bytes of this rank's data-parallel gradient reductions so far, sent
  // and as plain fp32 collectives (thread-safe reads; bucket_reduction.h).
  const GradTraffic& gradTraffic() const { return gradTraffic_; }

  int32_t stage() const { return stage_; }
  const layout::Schedule& schedule() const { return schedule_; }
  int32_t chunks() const { return static_cast<int32_t>(models_.size()); }
  GptModel& model(int32_t chunk = 0) { return *models_.at(chunk); }
  // name -> full values of this rank's parameters, chunk by chunk, tp slices
  // reassembled (collective over dp at ZeRO 3, and over tp).
  Result<NamedValues> parameters();

 private:
  RankTrainer(const TrainerOptions& options, RankSetup setup);
  Status initialize();

  TrainerOptions options_;
  ParallelOptions parallel_;
  PipelineOptions pipeline_;
  RankGroups groups_;
  std::unique_ptr<Backend> backend_;             // declared before every tensor: outlives them
  std::unique_ptr<CommTensorParallel> tpGroup_;  // over groups_.tp, given to the models
  std::unique_ptr<CommExpertParallel> epGroup_;  // over groups_.ep, given to the models
  tracer::Recorder* recorder_ = nullptr;
  int32_t stage_ = 0;
  layout::Schedule schedule_;
  std::vector<int32_t> split_;                        // layers per virtual stage (p·v entries)
  std::vector<std::unique_ptr<GptModel>> models_;     // [chunk]
  std::vector<std::unique_ptr<GradientSync>> syncs_;  // [chunk]
  std::unique_ptr<DataLoader> loader_;
  std::unique_ptr<ScheduleExecutor> executor_;
  std::string dataSource_;
  GradTraffic gradTraffic_;
  int64_t step_ = 0;
};

}  // namespace bubblescope::engine
