// PipelineExecutor: runs one pipeline stage's op list (engine/layout/schedule.h)
// for real: forwards and backwards of its model chunks, activations and their
// gradients exchanged with the neighbouring stages over the pp communicator.
//
// Execution of one step's ops, in list order:
//  - RecvActivation / RecvGrad: waits until the peer's message has arrived
//    (Communicator::awaitMessage), then receives it. Time blocked on a peer
//    that is not ready is its own span, EventKind::kWait on Lane::kPipeline
//    (dim pp, peer's world rank, micro-batch, stage, chunk); the receive span
//    that follows covers only the transfer.
//  - Forward / Backward: one span each (micro-batch, stage, chunk) around the
//    chunk's model pass; the first virtual stage reads tokens from the data
//    loader, the last computes the loss. The chunk's DataParallel is told
//    which backward is the chunk's last of the step (ZeRO 0/1 reduce there).
//  - BackwardInput / BackwardWeight (zb-h1's B and W): B computes the input
//    gradient (its SendGrad follows right after it) and keeps what W needs in
//    the micro-batch's activations; W adds the parameter gradients. Spans
//    EventKind::kBackwardInput / kBackwardWeight (micro-batch, stage, chunk),
//    with the model's per-layer spans of the same kinds inside. A slot's
//    gradients are complete only after its W, so DataParallel's buckets are
//    filled in W and "the chunk's last backward of the step" is its last W.
//    The in-flight micro-batch (activations and kept gradients) lives until
//    its W has run and its gradient has been sent.
//  - SendActivation / SendGrad: copies the tensor into a send buffer and
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
//  - AllReduceGrads / ReduceScatterGrads: completes outstanding sends (the
//    DataParallel buckets already ran in the last backward); OptimizerStep is
//    left to the caller (it needs the global gradient norm).
// Messages are matched by tag = direction·16384 + micro-batch·8 + the
// receiving chunk (a send's op names its producing chunk, a receive's its
// consuming one; they differ across the p − 1 -> 0 boundary when v > 1), so a
// step has at most 2047 micro-batches and 8 chunks per stage.
//
// Contract: every stage of the pp group runs the same Schedule's lists in the
// same step order; `chunks[c]` holds virtual stage c·p + stage. The models,
// their DataParallel objects, `pp`, `loader` and `allocator` (the models')
// outlive the executor. Not
// thread-safe (the training thread).
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "engine/data_loader.h"
#include "engine/layout/op.h"
#include "engine/parallel/data_parallel.h"

namespace bubblescope::engine {

struct PipelineChunk {
  GptModel* model = nullptr;
  DataParallel* sync = nullptr;
};

struct PipelineStepContext {
  int32_t step = 0;
  int32_t firstGlobalMicroBatch = 0;  // data-loader index of micro-batch 0 on this dp rank
  double lossScale = 1.0;             // each micro-batch's loss weight, 1/(M·dp)
};

class PipelineExecutor {
 public:
  // b, t: micro-batch shape (B sequences of T tokens); recompute: activation
  // checkpointing (above).
  PipelineExecutor(std::vector<PipelineChunk> chunks, int32_t stage, Communicator& pp,
                   const DataLoader& loader, Allocator& allocator, int64_t b, int64_t t,
                   bool recompute = false);
  ~PipelineExecutor();
  PipelineExecutor(const PipelineExecutor&) = delete;
  PipelineExecutor& operator=(const PipelineExecutor&) = delete;

  void setRecorder(tracer::Recorder* recorder) { recorder_ = recorder; }

  // Runs `ops` (this stage's list) up to and including its gradient
  // collective. Returns the sum of the unscaled losses of the micro-batches
  // whose head this stage ran (0 on stages without the head).
  Result<double> runStep(const std::vector<layout::Op>& ops, const PipelineStepContext& context);

 private:
  struct InFlight {  // one (micro-batch, chunk) from its forward to its last backward op
    std::unique_ptr<Activations> acts;
    Tensor input;                   // (B, T, C) received activation (kActivations)
    std::vector<float> outputGrad;  // (B, T, C) received gradient
    bool dropped = false;           // activations released; recompute before backward
    bool backwardDone = false;      // Backward, or W, ran: parameter gradients are in
    bool gradSent = false;          // SendGrad posted the input gradient
  };
  struct PendingSend {
    CommHandle handle;
    std::vector<float> buffer;
  };

  Status receive(const layout::Op& op, std::span<float> into);
  Status sendFrom(const layout::Op& op, std::span<const float> data);
  // The chunk's forward into the slot's activations (taken from the pool);
  // kind kForward adds the loss to lossSum, kRecompute ignores it.
  Status forward(const layout::Op& op, tracer::EventKind kind, double& lossSum);
  void dropActivations(const layout::Op& op);  // recompute only
  Status backward(const layout::Op& op, bool lastOfChunk);
  Status backwardInput(const layout::Op& op);                     // zb-h1 "B"
  Status backwardWeight(const layout::Op& op, bool lastOfChunk);  // zb-h1 "W"
  Status activationsFor(const layout::Op& op);                    // recomputes dropped ones
  std::span<const float> outputGradOf(const layout::Op& op);
  void releaseIfDone(const layout::Op& op);
  Status completeSends();
  InFlight& slot(const layout::Op& op) { return inFlight_[{op.microBatch, op.chunk}]; }
  void release(const layout::Op& op);
  int32_t virtualStage(int32_t chunk) const { return chunk * pp_.size() + stage_; }
  CommTrace commTrace(const char* name, const layout::Op& op) const;
  // Where an op's enclosing compute span goes: nowhere under tp (its
  // blocking all-reduces run inside forward and B; the per-layer spans stand
  // alone), the recorder otherwise.
  tracer::Recorder* opSpans(const GptModel& model) const {
    return model.tpSize() > 1 ? nullptr : recorder_;
  }

  std::vector<PipelineChunk> chunks_;
  int32_t stage_;
  Communicator& pp_;
  const DataLoader& loader_;
  Allocator& allocator_;
  int64_t b_, t_, c_;
  bool recompute_;
  tracer::Recorder* recorder_ = nullptr;
  PipelineStepContext context_;
  Batch batch_;
  std::map<std::pair<int32_t, int32_t>, InFlight> inFlight_;
  std::vector<std::vector<std::unique_ptr<Activations>>> freeActs_;  // [chunk], reused
  std::deque<PendingSend> sends_;
};

}  // namespace bubblescope::engine
