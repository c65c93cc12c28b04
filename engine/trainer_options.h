// TrainerOptions: what a training run is asked to do (model, batch, seed,
// data, learning-rate schedule, optimizer, clipping, checkpoint to resume),
// StepResult: what one step reports, and the run's data loader. The trainer
// that runs the steps, for every layout and for a single process, is
// RankTrainer (engine/parallel/rank_trainer.h).
//
// One step = M micro-batches of B sequences of T = seqLen tokens: zero the
// gradients, forward + backward each micro-batch (gradients accumulate, each
// scaled by 1/M so they are those of the mean loss), clip the global gradient
// norm, one AdamW update at the schedule's learning rate. Deterministic: the
// same options give bit-identical losses (OpenBLAS runs on one thread).
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"
#include "engine/adamw.h"
#include "engine/data_loader.h"
#include "engine/layout/model_config.h"
#include "engine/lr_schedule.h"

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

}  // namespace bubblescope::engine
