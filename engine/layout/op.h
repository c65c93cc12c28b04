// Op: one instruction of a pipeline schedule, as a plain value.
//
// A schedule is, per pipeline stage, an ordered list of Ops (docs/design.md,
// "Pipeline schedules are data"). The runtime executes the list for real; the
// simulator replays it under a cost model. The vocabulary follows DeepSpeed's
// pipeline instructions (its TrainSchedule) with the backward split of Qi et al.
// (arXiv 2401.10241): BackwardInput (B, input gradient) and BackwardWeight
// (W, weight gradient).
#pragma once

#include <cstdint>
#include <string>

namespace bubblescope::layout {

// Append-only: the numeric values may be stored in traces.
enum class OpType : uint8_t {
  kForward = 0,         // F(mb, chunk): forward of one micro-batch through one chunk
  kBackward = 1,        // B+W fused: input and weight gradients
  kBackwardInput = 2,   // B only: the gradient sent to the previous stage
  kBackwardWeight = 3,  // W only: weight gradients; needs its BackwardInput first
  kSendActivation = 4,  // forward output to the next virtual stage (non-blocking)
  kRecvActivation = 5,  // forward input from the previous virtual stage (blocking)
  kSendGrad = 6,        // input gradient to the previous virtual stage (non-blocking)
  kRecvGrad = 7,        // output gradient from the next virtual stage (blocking)
  kAllReduceGrads = 8,  // DP gradient all-reduce (ZeRO 0), once per step, all chunks
  // ZeRO gradient reduce-scatter: ZeRO 1 once per step (all chunks, mb -1);
  // ZeRO 2 and 3 once per (micro-batch, chunk), right after its backward (W).
  kReduceScatterGrads = 9,
  kOptimizerStep = 10,    // once per step, after the collectives: norm, clip, AdamW
  kAllGatherParams = 11,  // ZeRO 1, 2: once per step, after OptimizerStep, all chunks
};

// Contract for the fields:
//  - microBatch: 0..m-1 for per-micro-batch ops (ZeRO 2/3's
//    ReduceScatterGrads included), -1 for step-level ops (the step's gradient
//    collective, the optimizer step, the parameter all-gather).
//  - chunk: the local model chunk (0..v-1) the op belongs to. For a send it is
//    the producing chunk, for a receive the consuming chunk. Chunk c of stage k
//    is virtual stage c*p + k (Megatron-LM interleaving order).
//  - peer: the pipeline stage at the other end of a send or receive, -1 for
//    every other op.
struct Op {
  OpType type = OpType::kForward;
  int32_t microBatch = -1;
  int32_t chunk = 0;
  int32_t peer = -1;

  bool operator==(const Op&) const = default;
};

// True for Forward, Backward, BackwardInput, BackwardWeight.
bool isCompute(OpType type);
// True for AllReduceGrads and ReduceScatterGrads.
bool isGradientCollective(OpType type);
// True for the four pipeline sends and receives.
bool isPointToPoint(OpType type);
// True for BackwardInput and Backward: the ops that produce the input gradient.
bool producesInputGrad(OpType type);

// "Forward", "SendGrad", ...
const char* opTypeName(OpType type);
// One-letter code used by the ASCII renderer: F, B, B (input), W, ...
char opTypeLetter(OpType type);
// "Forward(mb 3, chunk 1)", "SendActivation(mb 3, chunk 0 -> stage 2)", "OptimizerStep".
std::string toString(const Op& op);

}  // namespace bubblescope::layout
