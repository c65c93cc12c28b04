// ParallelTrainer: one data-parallel rank of a training run (Trainer's
// counterpart under mpirun), with ZeRO 0-3 over the dp group and, given a tp
// group, Megatron-style tensor parallelism (gpt_layers.h) inside the model.
//
// Global batch (DESIGN.md correctness rule): one step trains on
// M × dp micro-batches of B sequences. Rank d of the dp group takes the
// global micro-batch indices d·M .. d·M + M − 1 (DataLoader batches depend
// only on (seed, step, index)), so the union over ranks is exactly the
// batch of a single-rank Trainer with M × dp micro-batches
// (singleRankEquivalent()). Each micro-batch's loss is scaled by 1/(M·dp)
// and gradients are summed over the group, so every rank trains on the
// global mean gradient; clipping uses the global norm; the reported loss is
// the mean over all M·dp micro-batches (an all-reduce).
//
// Tensor parallelism: the tp ranks of one dp rank train the same
// micro-batches; each holds its slices of the blocks' matrices and
// DataParallel works on those slices unchanged (its dp group joins the ranks
// with the same tp coordinate). The gradient norm sums the tp slices' squares
// over tp and counts the replicated parameters once.
//
// Contract: create() and step() are collective over `dp` (and `tp`); both
// must outlive the trainer. Spans (compute, and the communicator's) go to the Recorder of
// setRecorder(). The training thread only.
#pragma once

#include <memory>
#include <vector>

#include "engine/data_loader.h"
#include "engine/parallel/data_parallel.h"
#include "engine/parallel/rank_trainer.h"
#include "engine/parallel/tp_group.h"
#include "engine/trainer.h"

namespace bubblescope::engine {

class ParallelTrainer final : public RankTrainer {
 public:
  // `options.microBatches` is M, per rank; `options.batchSize` is B.
  // Checkpoint loading (loadPath) is not supported here. `tp`: the tensor
  // parallel group (null: none).
  static Result<std::unique_ptr<ParallelTrainer>> create(const TrainerOptions& options,
                                                         const ParallelOptions& parallel,
                                                         Communicator& dp,
                                                         Communicator* tp = nullptr);

  void setRecorder(tracer::Recorder* recorder) override;
  Result<StepResult> step() override;  // loss, gradNorm and tokens are global
  int64_t completedSteps() const { return step_; }

  const TrainerOptions& options() const { return options_; }
  const ParallelOptions& parallelOptions() const override { return parallel_; }
  GptModel& model() { return *model_; }
  DataParallel& dataParallel() { return *dp_sync_; }
  const Allocator& allocator() const override { return allocator_; }
  MemoryReport memory() const override { return memoryOf(allocator_); }
  // Ψ of this rank's model (its tp slices).
  int64_t parameterCount() const override { return dp_sync_->flat().total(); }
  int64_t tokensPerStep() const override;
  const std::string& dataSource() const { return dataSource_; }

  // name -> full values of every parameter (collective over dp at ZeRO 3,
  // and over tp).
  Result<NamedValues> fullParameters();

 private:
  ParallelTrainer(const TrainerOptions& options, const ParallelOptions& parallel, Communicator& dp,
                  Communicator* tp)
      : options_(options), parallel_(parallel), dp_(dp), tp_(tp) {
    if (tp_ != nullptr) tpGroup_ = std::make_unique<CommTensorParallel>(*tp_);
  }
  Status initialize();

  TrainerOptions options_;
  ParallelOptions parallel_;
  Communicator& dp_;
  Communicator* tp_;
  std::unique_ptr<CommTensorParallel> tpGroup_;  // over tp_, given to the model
  tracer::Recorder* recorder_ = nullptr;
  Allocator allocator_;  // declared first: outlives every tensor below
  std::unique_ptr<GptModel> model_;
  std::unique_ptr<DataParallel> dp_sync_;
  std::unique_ptr<Activations> acts_;
  std::unique_ptr<DataLoader> loader_;
  std::string dataSource_;
  Batch batch_;
  int64_t step_ = 0;
};

// The single-rank Trainer options that train on the same global batch:
// M × dp micro-batches of B sequences.
TrainerOptions singleRankEquivalent(const TrainerOptions& perRank, int32_t dp);

}  // namespace bubblescope::engine
