// What `train` writes for outside tools to replay a step (docs/engine.md,
// "Replaying a step"): a step's token batch as JSON (--dump-batch) and the
// last step's gradients as safetensors (--save-grads).
#pragma once

#include <string>

#include "common/status.h"
#include "engine/parallel/rank_trainer.h"

namespace bubblescope::cli {

// The global batch of (0-based) step `step` as the trainer draws it:
// {"step", "seed", "data", "micro_batches", "batch_size", "seq_len",
//  "tokens": [M][B][T], "targets": [M][B][T]} (targets = tokens shifted by
// one in the data). Depends only on the options and the data, not on
// training: any step can be dumped before it runs.
Status writeBatchJson(const engine::TrainerOptions& options, int64_t step, const std::string& path);

// The gradients of the step `last` that `trainer` ran last, as AdamW used
// them (after clipping), one F32 tensor per parameter under its name, with
// metadata step, loss, grad_norm (before clipping), lr and clip_scale (the
// factor clipping applied, 1 when it did not). CPU backend only.
Status writeGradients(engine::RankTrainer& trainer, const engine::StepResult& last,
                      const std::string& path);

}  // namespace bubblescope::cli
