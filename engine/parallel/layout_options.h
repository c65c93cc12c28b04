// What a layout file means for one rank's trainer.
#pragma once

#include "engine/layout/layout.h"
#include "engine/parallel/rank_trainer.h"

namespace bubblescope::engine {

// Per-rank trainer options of `layout`: B = micro_batch_size, M =
// micro_batches, its seed, data and learning rate; warm-up a tenth of the
// steps (at most 100) then cosine decay over `steps`, as `train` does.
TrainerOptions trainerOptionsFor(const layout::Layout& layout);
// ZeRO stage, overlap and bucket capacity (fp32 elements) of `layout`.
ParallelOptions parallelOptionsFor(const layout::Layout& layout);

}  // namespace bubblescope::engine
