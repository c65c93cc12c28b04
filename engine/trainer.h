// Trainer: single-process training of the GPT decoder, the API the CLI calls.
//
// One step = M micro-batches of B sequences of T = seqLen tokens: zero the
// gradients, forward + backward each micro-batch (gradients accumulate, each
// scaled by 1/M so they are those of the mean loss), clip the global gradient
// norm, one AdamW update at the schedule's learning rate.
//
// Compute: the Trainer owns the Backend it trains on (given to create(), or
// a CpuBackend): parameters, gradients, optimizer state and activations live
// in its memory; token ids and targets are uploaded each micro-batch;
// parameters are initialised on the host (same values on every backend);
// AdamW runs as backend.adamwUpdate per parameter; the loss and the gradient
// norm are read back at the backend's synchronisation points and the step
// ends with synchronize(). On the CPU backend every number is bit for bit
// what the kernels compute directly. Checkpoints (save, loadPath) need a
// backend in host memory for now (docs/gpu.md).
//
// Contract: not thread-safe. Deterministic: the same options give
// bit-identical losses (OpenBLAS runs on one thread). Spans go to the
// Recorder given to create() (null: none); it must outlive the Trainer or be
// drained before the Trainer is destroyed (span names point into the model).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/result.h"
#include "engine/adamw.h"
#include "engine/allocator.h"
#include "engine/backend.h"
#include "engine/data_loader.h"
#include "engine/gpt_model.h"
#include "engine/lr_schedule.h"
#include "tracer/recorder.h"

namespace bubblescope::engine {

struct TrainerOptions {
  layout::ModelConfig model;
  int64_t batchSize = 8;     // B: sequences per micro-batch
  int32_t microBatches = 1;  // M: micro-batches accumulated per step
  uint64_t seed = 1337;      // initialisation and data order
  std::string dataPath;      // text file, byte-tokenized; empty: the synthetic corpus
  LrSchedule schedule{.peak = 1e-3, .minRatio = 0.1, .warmupSteps = 10, .totalSteps = 100};
  AdamWConfig optimizer;
  double gradClip = 1.0;  // max global gradient norm; <= 0 disables clipping
  // Resume from this checkpoint: parameters, optimizer state and step are
  // restored, and the saved seed, batch size, micro-batches, schedule,
  // optimizer and clipping settings replace the ones above. The model config
  // must have the saved shape.
  std::string loadPath;

  Status validate() const;
  std::string settingsJson() const;  // everything but model, data and loadPath
  Status applySettingsJson(const std::string& json);
};

struct StepResult {
  int64_t step = 0;       // 0-based index of the step that ran
  double loss = 0.0;      // mean over the step's micro-batches
  double lr = 0.0;        // learning rate used
  double gradNorm = 0.0;  // global norm before clipping
  int64_t tokens = 0;     // B * T * M
  int64_t startNs = 0;    // host clock (tracer::hostNowNs)
  int64_t endNs = 0;
};

// The data loader of a run: the options' data file (byte-tokenized) or the
// synthetic corpus, seeded from options.seed; `source` receives its name for
// messages. Every rank of a parallel run builds the same one.
Result<DataLoader> createDataLoader(const TrainerOptions& options, std::string& source);

class Trainer {
 public:
  // `backend`: the device to train on (null: a CpuBackend).
  static Result<std::unique_ptr<Trainer>> create(const TrainerOptions& options,
                                                 tracer::Recorder* recorder = nullptr,
                                                 std::unique_ptr<Backend> backend = nullptr);
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  Result<StepResult> step();
  int64_t completedSteps() const { return step_; }
  // Writes a checkpoint of the current state (see checkpoint.h).
  Status save(const std::string& path);

  const TrainerOptions& options() const { return options_; }  // effective (after a load)
  GptModel& model() { return *model_; }
  const Allocator& allocator() const { return backend_->allocator(); }
  Backend& backend() { return *backend_; }
  int64_t tokensPerStep() const {
    return options_.batchSize * options_.model.seqLen * options_.microBatches;
  }
  const std::string& dataSource() const { return dataSource_; }
  int64_t dataTokenCount() const { return loader_->tokenCount(); }

 private:
  Trainer(const TrainerOptions& options, tracer::Recorder* recorder,
          std::unique_ptr<Backend> backend)
      : options_(options), recorder_(recorder), backend_(std::move(backend)) {}
  Status initialize();

  TrainerOptions options_;
  tracer::Recorder* recorder_;
  std::unique_ptr<Backend> backend_;  // declared first: outlives every tensor below
  std::unique_ptr<GptModel> model_;
  std::unique_ptr<AdamW> optimizer_;
  std::unique_ptr<Activations> acts_;
  std::unique_ptr<DataLoader> loader_;
  std::string dataSource_;
  Batch batch_;
  int64_t step_ = 0;
};

}  // namespace bubblescope::engine
