// What a rank does with its DataParallel chunks (one per model chunk it
// holds) at the end of every step, and to read its parameters back: the one
// copy both ParallelTrainer (one chunk, no pipeline) and PipelineTrainer use.
//
// Contract: collective over the groups given, in this order: the gradient
// norm's squares are summed over pp, then tp; the loss over pp, then dp.
// Every rank of a group calls with its chunks in the same order. The
// training thread only.
#pragma once

#include <vector>

#include "common/result.h"
#include "engine/parallel/data_parallel.h"
#include "engine/parallel/rank_trainer.h"
#include "engine/parallel/tp_group.h"
#include "engine/trainer.h"

namespace bubblescope::engine {

// The groups a step's scalars are summed over; null: not part of the layout.
struct StepGroups {
  Communicator& dp;
  Communicator* pp = nullptr;
  Communicator* tp = nullptr;
};

// Global gradient-norm clipping, exactly as clipGradNorm() on one rank (tp
// slices count on every tp rank, replicated parameters on tp rank 0), AdamW
// at the step's learning rate in one kOptimizer span (stage `stage`, -1 for
// none), the ZeRO gather of updated parameters, and the global mean loss
// from this rank's `lossSum`. Fills result.gradNorm, lr and loss.
Status finishStep(const TrainerOptions& options, int64_t step, int32_t stage,
                  const std::vector<DataParallel*>& chunks, const StepGroups& groups,
                  tracer::Recorder* recorder, double lossSum, StepResult& result);

// Every parameter of the rank's chunks by name, with tp slices reassembled
// into full tensors (collective over dp and, when given, tp).
Result<NamedValues> chunkParameters(const std::vector<DataParallel*>& chunks, Communicator* tp);

}  // namespace bubblescope::engine
