// ScheduleExecutor: runs one rank's op list of a step (engine/layout/schedule.h)
// for real, whatever the layout: a single process is the one-stage schedule
// of the 1x1x1 layout, pp = 1 a one-stage schedule over its dp (and tp)
// groups. Every op of the list runs here, the gradient collectives and the
// optimizer step included; nothing of a step happens outside the list.
//
// Execution of one step's ops, in list order:
//  - RecvActivation / RecvGrad: a blocking receive on the pp Communicator,
//    which splits its time (communicator.h): blocked on a peer that is not
//    ready is a "wait_activation" / "wait_grad" span, EventKind::kWait on
//    Lane::kPipeline (dim pp, peer's world rank, micro-batch, stage, chunk);
//    the receive span that follows covers only the transfer.
//  - Forward / Backward: one span each (micro-batch, stage, chunk) around the
//    chunk's model pass; the first virtual stage reads tokens from the data
//    loader, the last computes the loss. The chunk's GradientSync is told
//    which backward is the chunk's last of the step; as slots finish their
//    backward, its buckets are launched (DataParallel's hooks), so the
//    reduction overlaps the backward still running.
//  - BackwardInput / BackwardWeight (zb-h1's B and W): B computes the input
//    gradient (its SendGrad follows right after it) and keeps what W needs in
//    the micro-batch's activations; W adds the parameter gradients. Spans
//    EventKind::kBackwardInput / kBackwardWeight (micro-batch, stage, chunk),
//    with the model's per-layer spans of the same kinds inside. A slot's
//    gradients are complete only after its W, so buckets are filled in W and
//    "the chunk's last backward of the step" is its last W. The in-flight
//    micro-batch (activations and kept gradients) lives until its W has run
//    and its gradient has been sent.
//  - SendActivation / SendGrad: copies the tensor into a send buffer of the
//    backend's memory (a Backend copy queued after the kernels that made it) and
//    starts a non-blocking send, traced as its posting (the receiver's span
//    shows the transfer); every send is waited before the step's gradient
//    collective op, so buffers outlive their transfer.
//  - Recompute (activation checkpointing, `recompute` true): after a
//    micro-batch's forward (after its SendActivation, if any) the chunk's
//    activations go back to the pool; the stage keeps only the stage input
//    (the received activation, a kActivations tensor; the first virtual stage
//    and the head re-read tokens and targets from the deterministic loader).
//    Right before that micro-batch's backward (or B) the forward runs again,
//    one span EventKind::kRecompute (micro-batch, stage, chunk) with a
//    kRecompute span per layer inside, its loss ignored. So at most one set
//    of activations per chunk is alive at a time (with zb-h1: those of the
//    micro-batches between their B and their W); the result is bit-identical
//    to the plain run.
//  - AllReduceGrads / ReduceScatterGrads (mb -1, ZeRO 0/1): completes
//    outstanding sends, then every chunk's gradient collective
//    (GradientSync::completeGradients(): launches the buckets not launched
//    yet, waits for all of them). Their buckets were launched during the
//    chunk's last backward (W) as each bucket's gradients became final.
//  - ReduceScatterGrads(mb, chunk) (ZeRO 2/3): that micro-batch's
//    reduce-scatter of the chunk's gradients: its buckets were launched
//    during the micro-batch's backward (W); the op waits for them and adds
//    this rank's piece into the gradient shard.
//  - OptimizerStep: completes outstanding sends; the global gradient norm
//    (squares summed over the chunks, the dp shards, then pp and tp),
//    clipping to the options' gradClip, AdamW at the step's learning rate
//    (one kOptimizer span).
//  - AllGatherParams (ZeRO 1/2): all-gathers the updated parameter shards,
//    chunk by chunk.
// A list must match the chunks' ZeRO stage (schedule.h): one step-level
// gradient collective after its last backward (ZeRO 0/1) or one
// ReduceScatterGrads after each (micro-batch, chunk)'s backward (ZeRO 2/3);
// one OptimizerStep after every collective; one AllGatherParams after it
// exactly at ZeRO 1/2. Any other list is refused before anything runs.
// Messages are matched by tag = direction·16384 + micro-batch·8 + the
// receiving chunk (a send's op names its producing chunk, a receive's its
// consuming one; they differ across the p − 1 -> 0 boundary when v > 1), so a
// step has at most 2047 micro-batches and 8 chunks per stage.
//
// Spans carry stage and chunk when there is a pipeline (p > 1 or v > 1),
// -1 otherwise. An op-level compute span is left out where the pass blocks
// on collectives inside (tp > 1, MoE all-to-alls at ep > 1, ZeRO-3): the
// per-layer spans stand alone.
//
// Contract: every stage of the pp group runs the same Schedule's lists in the
// same step order; `chunks[c]` holds virtual stage c·p + stage. The models,
// their GradientSync objects, the communicators, `loader`, `allocator` (the
// models') and `options` outlive the executor. Not thread-safe (the training
// thread).
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "engine/data_loader.h"
#include "engine/gpt_model.h"
#include "engine/layout/op.h"
#include "engine/parallel/communicator.h"
#include "engine/parallel/gradient_sync.h"
#include "engine/trainer_options.h"

namespace bubblescope::engine {

struct ExecutorChunk {
  GptModel* model = nullptr;
  GradientSync* sync = nullptr;
};

// The pipeline and the groups the OptimizerStep's norm is summed over; null:
// not part of the layout (a group of one).
struct ExecutorGroups {
  Communicator* pp = nullptr;
  Communicator* tp = nullptr;
};

struct StepContext {
  int32_t step = 0;
  int32_t firstGlobalMicroBatch = 0;  // data-loader index of micro-batch 0 on this dp rank
  double lossScale = 1.0;             // each micro-batch's loss weight, 1/(M·dp)
};

// What a step's ops produced on this rank.
struct StepOutcome {
  double lossSum = 0.0;   // this rank's head losses (0 without the head)
  double gradNorm = 0.0;  // global, before clipping
  double lr = 0.0;        // the learning rate of the update
};

class ScheduleExecutor {
 public:
  // `stage` of `stages` (p); b, t: micro-batch shape (B sequences of T
  // tokens); recompute: activation checkpointing (above). `groups.pp` may be
  // null only when p = 1.
  ScheduleExecutor(std::vector<ExecutorChunk> chunks, int32_t stage, int32_t stages,
                   ExecutorGroups groups, const DataLoader& loader, Allocator& allocator,
                   const TrainerOptions& options, bool recompute);
  ~ScheduleExecutor();
  ScheduleExecutor(const ScheduleExecutor&) = delete;
  ScheduleExecutor& operator=(const ScheduleExecutor&) = delete;

  // Allocates one micro-batch's activations per chunk up front (the pool the
  // forwards take from), so memory reports before the first step show them.
  Status reserveActivations();
  void setRecorder(tracer::Recorder* recorder) { recorder_ = recorder; }
  // Zeroes the chunks' gradients and runs `ops` (this stage's list).
  Result<StepOutcome> runStep(const std::vector<layout::Op>& ops, const StepContext& context);

 private:
  struct InFlight {  // one (micro-batch, chunk) from its forward to its last backward op
    std::unique_ptr<Activations> acts;
    Tensor input;                   // (B, T, C) received activation (kActivations)
    Tensor outputGrad;              // (B, T, C) received gradient (transferBuffer)
    bool dropped = false;           // activations released; recompute before backward
    bool backwardDone = false;      // Backward, or W, ran: parameter gradients are in
    bool gradSent = false;          // SendGrad posted the input gradient
  };
  struct PendingSend {
    CommHandle handle;
    Tensor buffer;  // transferBuffer(): the sent copy, alive until the send completes
  };

  Status receive(const layout::Op& op, std::span<float> into);
  Status sendFrom(const layout::Op& op, const Tensor& data);
  // A buffer of a pipeline transfer in the backend's memory.
  Tensor transferBuffer(int64_t elements);
  // The chunk's forward into the slot's activations (taken from the pool);
  // kind kForward adds the loss to lossSum, kRecompute ignores it.
  Status forward(const layout::Op& op, trace_model::EventKind kind, double& lossSum);
  void dropActivations(const layout::Op& op);  // recompute only
  Status backward(const layout::Op& op, bool lastOfChunk);
  Status backwardInput(const layout::Op& op);                     // zb-h1 "B"
  Status backwardWeight(const layout::Op& op, bool lastOfChunk);  // zb-h1 "W"
  Status activationsFor(const layout::Op& op);                    // recomputes dropped ones
  std::span<const float> outputGradOf(const layout::Op& op);
  void releaseIfDone(const layout::Op& op);
  Status completeSends();
  Status completeGradients(const layout::Op& op);  // AllReduceGrads / ReduceScatterGrads
  Status optimizerStep();                          // OptimizerStep
  Status checkList(const std::vector<layout::Op>& ops) const;
  InFlight& slot(const layout::Op& op) { return inFlight_[{op.microBatch, op.chunk}]; }
  void release(const layout::Op& op);
  int32_t virtualStage(int32_t chunk) const { return chunk * p_ + stage_; }
  bool pipelined() const { return p_ > 1 || chunks_.size() > 1; }
  TraceContext traceOf(const layout::Op& op) const;
  CommTrace commTrace(const char* name, const layout::Op& op) const;
  // Where an op's enclosing compute span goes: nowhere when the pass blocks
  // on collectives inside (tp all-reduces, ZeRO-3 gathers: the per-layer
  // spans stand alone), the recorder otherwise.
  tracer::Recorder* opSpans(const ExecutorChunk& chunk) const {
    return chunk.model->communicatesInPasses() || chunk.sync->blocksInPasses() ? nullptr
                                                                               : recorder_;
  }

  std::vector<ExecutorChunk> chunks_;
  int32_t stage_;
  int32_t p_;
  ExecutorGroups groups_;
  const DataLoader& loader_;
  Allocator& allocator_;
  Backend& backend_;  // the chunks' models' (one per rank)
  const TrainerOptions& options_;
  int64_t b_, t_, c_;
  bool recompute_;
  tracer::Recorder* recorder_ = nullptr;
  StepContext context_;
  StepOutcome outcome_;
  Batch batch_;
  std::map<std::pair<int32_t, int32_t>, InFlight> inFlight_;
  std::vector<std::vector<std::unique_ptr<Activations>>> freeActs_;  // [chunk], reused
  std::deque<PendingSend> sends_;
};

}  // namespace bubblescope::engine
