// Schedule: the per-stage op lists of one training step, and their generators.
//
// docs/design.md, "Pipeline schedules are data": a schedule is, per pipeline stage,
// an ordered list of Ops. Every generator here is a pure function of (p, m, v);
// the runtime (engine/parallel/schedule_executor.h) executes every op of the
// lists, with non-blocking sends and blocking receives, and simulate()
// (simulator.h) replays the same lists under a cost model. A single process is
// the one-stage schedule (p = 1, v = 1).
//
// Conventions shared by all generators:
//  - Stage k holds chunks 0..v-1; chunk c of stage k is virtual stage c*p + k
//    (Megatron-LM). Activations flow from virtual stage s to s+1, gradients back.
//  - A receive is placed immediately before the compute op that consumes it, a
//    send immediately after the op that produces it. Transfers between two
//    virtual stages on the same rank (p == 1, v > 1) have no ops: the data stays
//    local.
//  - The gradient collectives follow the ZeRO stage (zero_stage.h), and the
//    executor runs each of them: ZeRO 0 and 1 end the stage with one
//    AllReduceGrads (ZeRO 0) or ReduceScatterGrads (ZeRO 1) for all chunks
//    (mb -1); ZeRO 2 and 3 reduce-scatter every micro-batch's gradients: one
//    ReduceScatterGrads(mb, chunk) right after that micro-batch's Backward
//    (after its SendGrad) or BackwardWeight. A collective completes the
//    bucketed reductions that the backward (W) launched as each bucket's
//    gradients became final (nothing to reduce over a dp group of one).
//  - Then one OptimizerStep (global norm, clipping, AdamW) and, when ZeRO 1
//    or 2 leaves each rank with only its shard updated, one AllGatherParams.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "engine/layout/op.h"
#include "engine/layout/zero_stage.h"

namespace bubblescope::layout {

enum class ScheduleKind : uint8_t {
  kGPipe = 0,         // "gpipe": all forwards, then all backwards (Huang et al. 2019)
  kOneFOneB = 1,      // "1f1b": PipeDream-Flush / Megatron-LM non-interleaved
  kInterleaved = 2,   // "interleaved": Megatron-LM interleaved 1F1B, v chunks per stage
  kZeroBubbleH1 = 3,  // "zb-h1": Qi et al., arXiv 2401.10241, handcrafted ZB-H1
};

// "gpipe", "1f1b", "interleaved", "zb-h1".
const char* scheduleKindName(ScheduleKind kind);
// Parses the names above; an unknown name is an error that lists the known ones.
Result<ScheduleKind> parseScheduleKind(const std::string& name);
// All kinds, in the order above.
std::vector<ScheduleKind> allScheduleKinds();

struct Schedule {
  ScheduleKind kind = ScheduleKind::kOneFOneB;
  int32_t stages = 1;                      // p
  int32_t microBatches = 1;                // m
  int32_t chunks = 1;                      // v, model chunks per stage (1 unless interleaved)
  ZeroStage zeroStage = ZeroStage::kNone;  // decides the collectives (above)
  std::vector<std::vector<Op>> stageOps;   // [stage] -> ops in execution order

  int32_t virtualStages() const { return stages * chunks; }
  int32_t virtualStage(int32_t stage, int32_t chunk) const { return chunk * stages + stage; }
  // True when ops split the backward into BackwardInput and BackwardWeight.
  bool splitsBackward() const { return kind == ScheduleKind::kZeroBubbleH1; }
};

// Requirements (errors otherwise): p >= 1, m >= 1.
Result<Schedule> gpipe(int32_t p, int32_t m, ZeroStage zero = ZeroStage::kNone);
// Warm-up on stage k: min(p - k - 1, m) forwards (Megatron-LM
// forward_backward_pipelining_without_interleaving). Any m >= 1.
Result<Schedule> oneFOneB(int32_t p, int32_t m, ZeroStage zero = ZeroStage::kNone);
// Requirements: v >= 2, m % p == 0 (Megatron-LM's classic interleaved check,
// "number of microbatches is not divisible by pipeline-parallel size").
// Warm-up on stage k: min(2(p - k - 1) + (v - 1)·p, m·v) chunk forwards, with
// micro-batches taken in groups of p (Narayanan et al. 2021, arXiv 2104.04473).
Result<Schedule> interleaved(int32_t p, int32_t m, int32_t v, ZeroStage zero = ZeroStage::kNone);
// Requirement: m >= p (the handcrafted schedule's steady state needs it).
// Stage k runs, for x = 0 .. m+p-2, the triple (F_x, B_{x-(p-1-k)}, W_{x-(p-1)}),
// skipping indices outside 0..m-1: warm-up p-k-1 forwards as in 1F1B, then W
// deferred by k micro-batches to fill the cool-down bubble (Qi et al. Fig. 3).
// At most p micro-batches are between their F and their W on any stage, the
// same peak as 1F1B's stage 0.
Result<Schedule> zeroBubbleH1(int32_t p, int32_t m, ZeroStage zero = ZeroStage::kNone);

// Dispatches on kind; v is ignored (taken as 1) except for kInterleaved.
Result<Schedule> makeSchedule(ScheduleKind kind, int32_t p, int32_t m, int32_t v,
                              ZeroStage zero = ZeroStage::kNone);

// Megatron-LM's num_warmup_microbatches: the forwards (chunk forwards when
// interleaved) stage k runs before its steady state of one forward, one
// backward. GPipe: m. The first backward follows one more forward, if any.
int32_t warmupForwards(ScheduleKind kind, int32_t p, int32_t m, int32_t v, int32_t stage);

// What one stage's op list of a training step must hold, whoever wrote it
// (the executor runs a list only if it does; simulate() rejects one that does
// not). Chunks are below `chunks`. Under ZeRO 0 and 1: exactly one gradient
// collective for the whole step (micro-batch -1), after the last compute op.
// Under ZeRO 2 and 3: one ReduceScatterGrads per micro-batch and chunk that
// has a gradient-completing backward (Backward or W), each after that
// backward, and none for the whole step. Then exactly one OptimizerStep after
// the collectives and the compute, and one AllGatherParams after it exactly
// when the ZeRO stage gathers updated parameters (zero_stage.h). The error
// names the stage and the rule broken.
Status checkOpList(const std::vector<Op>& ops, ZeroStage zero, int32_t stage, int32_t chunks);

}  // namespace bubblescope::layout
