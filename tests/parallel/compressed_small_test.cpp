// Gradient compression on `small` (issue 19 asks it there): dp 4 runs of 20
// steps of every --grad-compression against the uncompressed run, each
// trains and stays within a measured distance of it at every step.
// Sized for the suite: one sequence per micro-batch and one micro-batch
// per rank (small: 3.3 M parameters, 128 tokens per rank and step).
#include "compressed_run.h"

namespace bubblescope::engine::testing {
namespace {

constexpr int kSteps = 20;

TrainerOptions smallOptions() {
  TrainerOptions o;
  o.model = layout::modelPreset("small").value();
  o.batchSize = 1;
  o.microBatches = 1;
  o.seed = 4242;
  o.schedule = {.peak = 1e-3, .minRatio = 0.1, .warmupSteps = 2, .totalSteps = kSteps};
  o.gradClip = 0.5;
  return o;
}

// The bounds were measured (dp 4, small, B 1, M 1, 20 steps, buckets of
// 2^20 elements so PowerSGD sees whole matrices, peak lr 1e-3, clipping
// 0.5; 02:07 on the session day, load 6 on 2 cores): worst |dloss| over
// the steps fp16 5.0e-4, bf16 1.6e-3, int8 2.3e-2, topk:0.1 1.29,
// powersgd:4 3.35; at the last step fp16 1e-4, bf16 3e-4, int8 3.5e-3,
// topk:0.1 0.32, powersgd:4 0.30; every run falls from 5.53 to 2.11-2.44.
// - fp16 / bf16 / int8: as on tiny (compressed_dp_test.cpp), the loss
//   follows none's step by step: bounds 5e-3 (10x), 1e-2 (6x), 0.1 (4x).
// - topk:0.1 and powersgd:4 deliver part of each step's gradient later
//   (error feedback). On small with one sequence per rank the uncompressed
//   run meets a hard batch at step 3 (loss 4.11 -> 5.26 -> 3.82); the
//   lossy runs take that batch's large update a step late, and their loss
//   jumps at step 4 instead (topk 5.11, powersgd 7.17 against none's 3.82).
//   That one-step shift sets the worst per-step distance, so those bounds
//   are loose (topk 2.5, 2x; powersgd 4.5, 1.3x); what pins them is the
//   last step, within 0.6 of none's (2x), and the fall of more than 2.5.
// A broken reduction (a bucket not reduced, a factor of N, residuals
// dropped or added twice) stops training or ends far from none.
TEST(CompressedSmallTest, EveryVariantTrainsCloseToTheUncompressedRunOnSmall) {
  auto comm = dpGroup(4);
  expectVariantsTrainCloseToNone(*comm, smallOptions(),
                                 {
                                     {"fp16", 5e-3, 2.0, 5e-3},
                                     {"bf16", 1e-2, 2.0, 1e-2},
                                     {"int8", 0.1, 0.0, 0.1},
                                     {"topk:0.1", 2.5, 0.0, 0.6},
                                     {"powersgd:4", 4.5, 0.0, 0.6},
                                 },
                                 kSteps, 1 << 20, 2.5, "small");
}

}  // namespace
}  // namespace bubblescope::engine::testing
