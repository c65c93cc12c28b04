// PipelineTrainer: one rank of a pipeline-parallel run (pp > 1), with data
// parallelism and ZeRO over its dp group, stage by stage.
//
// The model's layers are split into p·v chunks (stage_split.h: by cost, or the
// layout's explicit split); stage k holds chunks c = 0 .. v − 1 as virtual
// stages c·p + k (Megatron-LM interleaving; v = 1 except for the interleaved
// schedule), the embedding in virtual stage 0 and the head (loss) in virtual
// stage p·v − 1. Each chunk is one GptModel over its slot range, initialised
// in full shape semantics from the run's seed (equal weights to the
// single-rank model's), with its own DataParallel (buckets, ZeRO shards,
// AdamW state) over the dp group. Each step runs the stage's op list of the
// layout's schedule (PipelineExecutor), then the global gradient norm (sum of
// squares over the chunks, the dp shards and the pp stages), clipping, AdamW
// and the ZeRO parameter gather chunk by chunk, and the global loss (the mean
// over the last virtual stage's M·dp micro-batches).
//
// Global batch: as ParallelTrainer: dp rank d takes micro-batches
// d·M .. d·M + M − 1, each loss scaled by 1/(M·dp); singleRankEquivalent()
// gives the matching single-rank run.
//
// Tensor parallelism: given a tp group, each chunk's blocks hold this tp
// rank's slices (gpt_layers.h); the pp group joins the ranks of one tp
// coordinate, so activations and gradients (replicated over tp) pass
// between equal tp ranks. The norm sums squares over tp (replicated
// parameters once, ParallelTrainer's rule).
//
// Contract: create() and step() are collective over the dp, pp (and tp)
// groups; the communicators outlive the trainer. Every schedule runs, zb-h1's
// split backward included (with any ZeRO stage and with recompute); v > 1
// needs the interleaved schedule (and m % p == 0, v <= 8). Training thread
// only.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/layout/schedule.h"
#include "engine/parallel/pipeline_executor.h"
#include "engine/parallel/rank_trainer.h"
#include "engine/parallel/tp_group.h"

namespace bubblescope::engine {

struct PipelineOptions {
  layout::ScheduleKind schedule = layout::ScheduleKind::kOneFOneB;
  int32_t chunks = 1;                // v
  std::vector<int32_t> stageLayers;  // explicit split (p·v entries), empty: by cost
  bool recompute = false;            // activation checkpointing (pipeline_executor.h)
};

class PipelineTrainer final : public RankTrainer {
 public:
  // `options.microBatches` is M per dp rank, `options.batchSize` B.
  static Result<std::unique_ptr<PipelineTrainer>> create(const TrainerOptions& options,
                                                         const ParallelOptions& parallel,
                                                         const PipelineOptions& pipeline,
                                                         Communicator& dp, Communicator& pp,
                                                         Communicator* tp = nullptr);
  ~PipelineTrainer() override;

  void setRecorder(tracer::Recorder* recorder) override;
  Result<StepResult> step() override;
  const ParallelOptions& parallelOptions() const override { return parallel_; }
  const Allocator& allocator() const override { return allocator_; }
  MemoryReport memory() const override { return memoryOf(allocator_); }
  int64_t parameterCount() const override;  // this stage's, over its chunks
  int64_t tokensPerStep() const override;

  int32_t stage() const { return pp_.rank(); }
  const layout::Schedule& schedule() const { return schedule_; }
  int32_t chunks() const { return static_cast<int32_t>(models_.size()); }
  GptModel& model(int32_t chunk = 0) { return *models_.at(chunk); }
  // name -> full values of this stage's parameters, chunk by chunk
  // (collective over dp at ZeRO 3, and over tp).
  Result<NamedValues> stageParameters();

 private:
  PipelineTrainer(const TrainerOptions& options, const ParallelOptions& parallel,
                  const PipelineOptions& pipeline, Communicator& dp, Communicator& pp,
                  Communicator* tp)
      : options_(options), parallel_(parallel), pipeline_(pipeline), dp_(dp), pp_(pp), tp_(tp) {
    if (tp_ != nullptr) tpGroup_ = std::make_unique<CommTensorParallel>(*tp_);
  }
  Status initialize();

  TrainerOptions options_;
  ParallelOptions parallel_;
  PipelineOptions pipeline_;
  Communicator& dp_;
  Communicator& pp_;
  Communicator* tp_;
  std::unique_ptr<CommTensorParallel> tpGroup_;  // over tp_, given to the models
  tracer::Recorder* recorder_ = nullptr;
  Allocator allocator_;  // declared first: outlives every tensor below
  layout::Schedule schedule_;
  std::vector<std::unique_ptr<GptModel>> models_;     // [chunk]
  std::vector<std::unique_ptr<DataParallel>> syncs_;  // [chunk], over dp_
  std::vector<DataParallel*> dataParallels() const;   // syncs_, unowned
  std::unique_ptr<DataLoader> loader_;
  std::unique_ptr<PipelineExecutor> executor_;
  std::string dataSource_;
  int64_t step_ = 0;
};

// The slot range [first, last) of virtual stage `virtualStage` of a split
// (layers per virtual stage): the embedding joins the first, the head the last.
LayerRange pipelineSlots(const std::vector<int32_t>& split, int32_t virtualStage);

}  // namespace bubblescope::engine
