// RankTrainer: what a launcher needs of one rank's trainer, whatever the
// layout (ParallelTrainer for dp × ZeRO, PipelineTrainer when pp > 1).
//
// Contract: step() is collective over the rank's groups; every rank of the
// job calls it the same number of times. The training thread only.
#pragma once

#include <cstdint>

#include "common/result.h"
#include "engine/allocator.h"
#include "engine/layout/zero_stage.h"
#include "engine/trainer.h"
#include "tracer/recorder.h"

namespace bubblescope::engine {

struct ParallelOptions {
  layout::ZeroStage zeroStage = layout::ZeroStage::kNone;
  bool overlap = true;
  int64_t bucketElements = 25 * (1 << 20) / 4;
};

// Bytes this rank holds per category, now and at their peak since set-up.
struct MemoryReport {
  int64_t parameters = 0, gradients = 0, optimizer = 0, activations = 0;
  int64_t peakParameters = 0, peakGradients = 0, peakOptimizer = 0, peakActivations = 0;
};
MemoryReport memoryOf(const Allocator& allocator);

// The step's global mean loss from the sum of every micro-batch's loss over
// the job (`microBatches` per dp rank, `dpRanks` ranks), or an error naming
// the step when training diverged.
Result<double> meanStepLoss(double lossSum, int64_t microBatches, int64_t dpRanks, int64_t step);

// Tokens one step trains over the whole job: B · T · M per dp rank.
inline int64_t jobTokensPerStep(const TrainerOptions& o, int64_t dpRanks) {
  return o.batchSize * o.model.seqLen * o.microBatches * dpRanks;
}

class RankTrainer {
 public:
  virtual ~RankTrainer() = default;
  // Spans (compute and the communicators') go to `recorder` (null: none).
  virtual void setRecorder(tracer::Recorder* recorder) = 0;
  // One optimizer step; loss, gradNorm and tokens are global.
  virtual Result<StepResult> step() = 0;
  virtual const ParallelOptions& parallelOptions() const = 0;
  virtual const Allocator& allocator() const = 0;
  virtual MemoryReport memory() const = 0;
  virtual int64_t parameterCount() const = 0;  // parameters this rank's dp group trains
  virtual int64_t tokensPerStep() const = 0;   // over the whole job
};

}  // namespace bubblescope::engine
