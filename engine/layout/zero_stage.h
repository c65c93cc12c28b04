// ZeroStage: what ZeRO (Rajbhandari et al., arXiv 1910.02054) shards over the
// data-parallel group, and GradSync, the gradient collective that follows from
// it. The one definition of both: code asks the predicates below, never
// compares stage numbers.
#pragma once

#include <cstdint>

#include "common/result.h"

namespace bubblescope::layout {

enum class ZeroStage : uint8_t {
  kNone = 0,        // stage 0: plain data parallelism, everything replicated
  kOptimizer = 1,   // stage 1: optimizer state sharded
  kGradients = 2,   // stage 2: + gradients sharded
  kParameters = 3,  // stage 3: + parameters sharded
};

// Stage >= 1: each rank keeps and updates only its shard of the optimizer state.
constexpr bool shardsOptimizer(ZeroStage s) {
  return s != ZeroStage::kNone;
}
// Stage >= 2: each rank keeps only its shard of the gradients, so every
// micro-batch's gradients are reduce-scattered as backward produces them.
constexpr bool shardsGradients(ZeroStage s) {
  return s == ZeroStage::kGradients || s == ZeroStage::kParameters;
}
// Stage 3: each rank keeps only its shard of the parameters; a layer's are
// gathered for its forward and its backward.
constexpr bool shardsParameters(ZeroStage s) {
  return s == ZeroStage::kParameters;
}
// Stages 1 and 2: each rank updates only its shard of full parameters, so the
// updated shards are all-gathered after the optimizer step.
constexpr bool gathersUpdatedParameters(ZeroStage s) {
  return shardsOptimizer(s) && !shardsParameters(s);
}

// 0..3, as written in layouts, names and reports.
constexpr int32_t zeroStageNumber(ZeroStage s) {
  return static_cast<int32_t>(s);
}
// The stage numbered `number`, or InvalidArgument
// "zero_stage N is unknown (known: 0, 1, 2, 3)".
Result<ZeroStage> zeroStageFromNumber(int64_t number);

// The gradient collective of a pipeline stage: once after its last backward
// (ZeRO 0, 1), or once after every micro-batch's backward (ZeRO 2, 3:
// shardsGradients()).
enum class GradSync : uint8_t {
  kAllReduce = 0,      // plain data parallelism (ZeRO 0)
  kReduceScatter = 1,  // ZeRO 1, 2 and 3: each rank keeps the sum of its shard
};
constexpr GradSync gradSyncFor(ZeroStage s) {
  return shardsOptimizer(s) ? GradSync::kReduceScatter : GradSync::kAllReduce;
}

}  // namespace bubblescope::layout
