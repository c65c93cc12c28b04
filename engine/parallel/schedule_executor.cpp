#include "engine/parallel/schedule_executor.h"

#include <algorithm>
#include <cmath>

#include "engine/layout/schedule.h"
#include "engine/parallel/scalar_all_reduce.h"

namespace bubblescope::engine {
namespace {

using layout::Op;
using layout::OpType;
using trace_model::EventKind;

constexpr int32_t kMaxMicroBatches = 2047;
constexpr int32_t kMaxChunks = 8;

// Activations travel forward (direction 0), gradients backward (1); `chunk`
// is the consuming chunk (the receiver's), so both ends agree when the chunk
// changes across the boundary (interleaved: stage p − 1's chunk c feeds stage
// 0's chunk c + 1).
int32_t tagOf(int32_t direction, int32_t microBatch, int32_t chunk) {
  return direction * 16384 + microBatch * kMaxChunks + chunk;
}

}  // namespace

ScheduleExecutor::ScheduleExecutor(std::vector<ExecutorChunk> chunks, int32_t stage, int32_t stages,
                                   ExecutorGroups groups, const DataLoader& loader,
                                   Allocator& allocator, const TrainerOptions& options,
                                   bool recompute)
    : chunks_(std::move(chunks)),
      stage_(stage),
      p_(stages),
      groups_(groups),
      loader_(loader),
      allocator_(allocator),
      backend_(*chunks_.front().model->backend()),
      options_(options),
      b_(options.batchSize),
      t_(options.model.seqLen),
      c_(chunks_.front().model->config().hidden),
      recompute_(recompute),
      freeActs_(chunks_.size()) {}

ScheduleExecutor::~ScheduleExecutor() = default;

Status ScheduleExecutor::reserveActivations() {
  for (size_t c = 0; c < chunks_.size(); ++c) {
    if (!freeActs_[c].empty()) continue;
    BS_ASSIGN_OR_RETURN(auto acts, chunks_[c].model->newActivations(b_, t_));
    freeActs_[c].push_back(std::move(acts));
  }
  return Status::ok();
}

TraceContext ScheduleExecutor::traceOf(const Op& op) const {
  return {recorder_, context_.step, op.microBatch, pipelined() ? stage_ : -1,
          pipelined() ? op.chunk : -1};
}

CommTrace ScheduleExecutor::commTrace(const char* name, const Op& op) const {
  CommTrace trace;
  trace.name = name;
  trace.step = context_.step;
  trace.microBatch = op.microBatch;
  trace.stage = stage_;
  trace.chunk = op.chunk;
  return trace;
}

Status ScheduleExecutor::receive(const Op& op, std::span<float> into) {
  const bool activation = op.type == OpType::kRecvActivation;
  CommTrace trace = commTrace(activation ? "recv_activation" : "recv_grad", op);
  trace.waitName = activation ? "wait_activation" : "wait_grad";
  return groups_.pp->recv(into, op.peer, tagOf(activation ? 0 : 1, op.microBatch, op.chunk),
                          trace);
}

Tensor ScheduleExecutor::transferBuffer(int64_t elements) {
  // Host: uncounted scratch, as the received gradient always was; a device
  // needs the backend's memory, counted as activations.
  return Tensor({elements}, MemoryCategory::kActivations,
                backend_.device() == Device::kHost ? nullptr : &allocator_);
}

Status ScheduleExecutor::sendFrom(const Op& op, const Tensor& data) {
  const bool activation = op.type == OpType::kSendActivation;
  PendingSend& s = sends_.emplace_back();
  // Queued after the kernels that made `data`; the send is ordered after it
  // (the communicator's contract with the compute stream).
  s.buffer = transferBuffer(data.numel());
  backend_.copy(s.buffer.data(), data.data(), data.bytes());
  CommTrace trace = commTrace(activation ? "send_activation" : "send_grad", op);
  trace.spanAtStart = true;  // completion is only observed at the step's end
  // The receiver's chunk: the next virtual stage's for an activation, the
  // previous one's for a gradient.
  const int32_t consumer = (virtualStage(op.chunk) + (activation ? 1 : -1)) / p_;
  BS_ASSIGN_OR_RETURN(
      s.handle, groups_.pp->startSend(s.buffer.span(), op.peer,
                                      tagOf(activation ? 0 : 1, op.microBatch, consumer), trace));
  return Status::ok();
}

Status ScheduleExecutor::completeSends() {
  for (PendingSend& s : sends_) BS_RETURN_IF_ERROR(groups_.pp->wait(s.handle));
  sends_.clear();
  return Status::ok();
}

Status ScheduleExecutor::forward(const Op& op, EventKind kind, double& lossSum) {
  const ExecutorChunk& chunk = chunks_.at(op.chunk);
  GptModel& model = *chunk.model;
  InFlight& f = slot(op);
  if (!model.hasEmbedding() && f.input.numel() != b_ * t_ * c_) {
    return Status::internal("forward of micro-batch " + std::to_string(op.microBatch) +
                            " before its activation arrived on stage " + std::to_string(stage_));
  }
  auto& pool = freeActs_[op.chunk];
  if (pool.empty()) {
    BS_ASSIGN_OR_RETURN(f.acts, model.newActivations(b_, t_));
  } else {
    f.acts = std::move(pool.back());
    pool.pop_back();
  }
  TraceContext trace = traceOf(op);
  StageInput input;
  if (model.hasEmbedding() || model.hasHead()) {
    auto info = trace.span(EventKind::kDataLoad, "data_load");
    info.lane = trace_model::Lane::kData;
    tracer::ScopedSpan span(recorder_, info);
    loader_.fill(context_.step, context_.firstGlobalMicroBatch + op.microBatch, batch_);
  }
  if (model.hasEmbedding()) {
    input.tokens = batch_.tokens;
  } else {
    input.activation = f.input.span();
  }
  if (model.hasHead()) input.targets = batch_.targets;
  const bool again = kind == EventKind::kRecompute;
  // opSpans(): no op-level span where the pass blocks on collectives (tp
  // all-reduces, ep all-to-alls, ZeRO-3 gathers); the per-layer spans stand
  // alone there.
  chunk.sync->beginPass(context_.step, op.microBatch);
  tracer::ScopedSpan span(opSpans(chunk), trace.span(kind, again ? "recompute" : "forward",
                                                     model.forwardFlops(b_, t_)));
  trace.forwardKind = kind;  // the layers' spans: kForward, or kRecompute when again
  BS_ASSIGN_OR_RETURN(const double loss, model.forward(*f.acts, input, trace));
  if (model.hasHead() && !again) lossSum += loss;
  f.dropped = false;
  return Status::ok();
}

void ScheduleExecutor::dropActivations(const Op& op) {
  InFlight& f = slot(op);
  if (f.acts) freeActs_[op.chunk].push_back(std::move(f.acts));
  f.dropped = true;
}

Status ScheduleExecutor::backward(const Op& op, bool lastOfChunk) {
  const ExecutorChunk& chunk = chunks_.at(op.chunk);
  InFlight& f = slot(op);
  BS_RETURN_IF_ERROR(activationsFor(op));
  TraceContext trace = traceOf(op);
  chunk.sync->beginMicroBatch(context_.step, op.microBatch, lastOfChunk);
  {
    tracer::ScopedSpan span(opSpans(chunk), trace.span(EventKind::kBackward, "backward",
                                                       2 * chunk.model->forwardFlops(b_, t_)));
    BS_RETURN_IF_ERROR(chunk.model->backward(*f.acts, outputGradOf(op), context_.lossScale, trace));
  }
  f.backwardDone = true;
  return Status::ok();
}

Status ScheduleExecutor::backwardInput(const Op& op) {
  const ExecutorChunk& chunk = chunks_.at(op.chunk);
  InFlight& f = slot(op);
  BS_RETURN_IF_ERROR(activationsFor(op));
  TraceContext trace = traceOf(op);
  chunk.sync->beginPass(context_.step, op.microBatch);
  {
    tracer::ScopedSpan span(opSpans(chunk), trace.span(EventKind::kBackwardInput, "backward_input",
                                                       chunk.model->forwardFlops(b_, t_)));
    BS_RETURN_IF_ERROR(
        chunk.model->backwardInput(*f.acts, outputGradOf(op), context_.lossScale, trace));
  }
  // W needs neither: B kept the output gradient, and no recompute follows.
  f.outputGrad = Tensor();
  f.input = Tensor();
  return Status::ok();
}

Status ScheduleExecutor::backwardWeight(const Op& op, bool lastOfChunk) {
  const ExecutorChunk& chunk = chunks_.at(op.chunk);
  InFlight& f = slot(op);
  if (!f.acts || !f.acts->weightGradPending) {
    return Status::internal("weight gradient of micro-batch " + std::to_string(op.microBatch) +
                            " before its input gradient on stage " + std::to_string(stage_));
  }
  TraceContext trace = traceOf(op);
  chunk.sync->beginMicroBatch(context_.step, op.microBatch, lastOfChunk);
  {
    tracer::ScopedSpan span(recorder_, trace.span(EventKind::kBackwardWeight, "backward_weight",
                                                  chunk.model->forwardFlops(b_, t_)));
    BS_RETURN_IF_ERROR(chunk.model->backwardWeight(*f.acts, trace));
  }
  f.backwardDone = true;
  return Status::ok();
}

Status ScheduleExecutor::activationsFor(const Op& op) {
  InFlight& f = slot(op);
  if (f.dropped) {
    double ignored = 0.0;
    BS_RETURN_IF_ERROR(forward(op, EventKind::kRecompute, ignored));
  }
  if (!f.acts) {
    return Status::internal("backward of micro-batch " + std::to_string(op.microBatch) +
                            " before its forward on stage " + std::to_string(stage_));
  }
  return Status::ok();
}

std::span<const float> ScheduleExecutor::outputGradOf(const Op& op) {
  if (chunks_.at(op.chunk).model->hasHead()) return {};
  return slot(op).outputGrad.span();
}

void ScheduleExecutor::releaseIfDone(const Op& op) {
  auto it = inFlight_.find({op.microBatch, op.chunk});
  if (it == inFlight_.end()) return;
  const InFlight& f = it->second;
  // Done: its parameter gradients are in (after backward or W) and its input
  // gradient is on its way (or the first virtual stage has none to send).
  if (f.backwardDone && (f.gradSent || virtualStage(op.chunk) == 0)) release(op);
}

void ScheduleExecutor::release(const Op& op) {
  auto it = inFlight_.find({op.microBatch, op.chunk});
  if (it == inFlight_.end()) return;
  if (it->second.acts) freeActs_[op.chunk].push_back(std::move(it->second.acts));
  inFlight_.erase(it);
}

Status ScheduleExecutor::completeGradients(const Op& op) {
  if (op.microBatch >= 0) return chunks_.at(op.chunk).sync->completeGradients();  // ZeRO 2, 3
  BS_RETURN_IF_ERROR(completeSends());
  for (const ExecutorChunk& chunk : chunks_) BS_RETURN_IF_ERROR(chunk.sync->completeGradients());
  return Status::ok();
}

Status ScheduleExecutor::optimizerStep() {
  BS_RETURN_IF_ERROR(completeSends());  // ZeRO 2, 3 have no step-level collective to do it
  const bool countReplicated = groups_.tp == nullptr || groups_.tp->rank() == 0;
  // The norm's local sums are compute the trace shows (a pass over every
  // gradient: on `small` on this VM's CPU ~6 ms, an eighth of a 1-rank
  // step); their reductions are collectives of their own, outside the span.
  const TraceContext trace{recorder_, context_.step, -1, pipelined() ? stage_ : -1, -1};
  std::vector<GradSquares> local;
  {
    tracer::ScopedSpan span(recorder_, trace.span(EventKind::kOptimizer, "grad_norm"));
    for (const ExecutorChunk& chunk : chunks_) {
      BS_ASSIGN_OR_RETURN(const GradSquares s, chunk.sync->localGradSquares(countReplicated));
      local.push_back(s);
    }
  }
  double squares = 0.0;
  for (size_t i = 0; i < chunks_.size(); ++i) {
    BS_ASSIGN_OR_RETURN(const double chunkSquares, chunks_[i].sync->reduceGradSquares(local[i]));
    squares += chunkSquares;
  }
  CommTrace normTrace;
  normTrace.name = "grad_norm";
  normTrace.step = context_.step;
  for (Communicator* group : {groups_.pp, groups_.tp}) {
    if (group != nullptr && group->size() > 1) {
      BS_RETURN_IF_ERROR(allReduceScalar(*group, backend_, squares, normTrace));
    }
  }
  outcome_.gradNorm = std::sqrt(squares);
  outcome_.lr = options_.schedule.at(context_.step);
  {
    tracer::ScopedSpan span(recorder_, trace.span(EventKind::kOptimizer, "optimizer"));
    const bool clip = options_.gradClip > 0.0 && outcome_.gradNorm > options_.gradClip;
    for (const ExecutorChunk& chunk : chunks_) {
      if (clip) {
        chunk.sync->scaleGradients(
            static_cast<float>(options_.gradClip / (outcome_.gradNorm + 1e-6)));
      }
      BS_RETURN_IF_ERROR(chunk.sync->applyOptimizer(outcome_.lr));
    }
  }
  return Status::ok();
}

Status ScheduleExecutor::checkList(const std::vector<Op>& ops) const {
  for (const Op& op : ops) {
    if (op.microBatch > kMaxMicroBatches || op.chunk >= kMaxChunks) {
      return Status::invalidArgument("schedule op " + layout::toString(op) +
                                     " is outside the executor's limits (micro-batch <= 2047, "
                                     "chunk < 8)");
    }
  }
  return layout::checkOpList(ops, chunks_.front().sync->zeroStage(), stage_,
                             static_cast<int32_t>(chunks_.size()));
}

Result<StepOutcome> ScheduleExecutor::runStep(const std::vector<Op>& ops,
                                              const StepContext& context) {
  BS_RETURN_IF_ERROR(checkList(ops));
  context_ = context;
  outcome_ = {};
  for (const ExecutorChunk& chunk : chunks_) chunk.sync->zeroGradients();
  // The last backward (or W) of each chunk: a chunk's gradients are complete
  // after it, so ZeRO 0/1 launch the chunk's buckets during it.
  std::vector<size_t> lastBackward(chunks_.size(), ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (op.type == OpType::kBackward || op.type == OpType::kBackwardWeight) {
      lastBackward[op.chunk] = i;
    }
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    switch (op.type) {
      case OpType::kRecvActivation: {
        InFlight& f = slot(op);
        f.input = Tensor({b_, t_, c_}, MemoryCategory::kActivations, &allocator_);
        BS_RETURN_IF_ERROR(receive(op, f.input.span()));
        break;
      }
      case OpType::kRecvGrad: {
        InFlight& f = slot(op);
        f.outputGrad = transferBuffer(b_ * t_ * c_);
        BS_RETURN_IF_ERROR(receive(op, f.outputGrad.span()));
        break;
      }
      case OpType::kForward:
        BS_RETURN_IF_ERROR(forward(op, EventKind::kForward, outcome_.lossSum));
        // The last virtual stage sends nothing: drop right away.
        if (recompute_ && virtualStage(op.chunk) == p_ * static_cast<int32_t>(chunks_.size()) - 1) {
          dropActivations(op);
        }
        break;
      case OpType::kSendActivation: {
        const InFlight& f = slot(op);
        BS_RETURN_IF_ERROR(sendFrom(op, f.acts->output()));
        if (recompute_) dropActivations(op);
        break;
      }
      case OpType::kBackward:
        BS_RETURN_IF_ERROR(backward(op, i == lastBackward[op.chunk]));
        releaseIfDone(op);
        break;
      case OpType::kBackwardInput:
        BS_RETURN_IF_ERROR(backwardInput(op));
        break;
      case OpType::kBackwardWeight:
        BS_RETURN_IF_ERROR(backwardWeight(op, i == lastBackward[op.chunk]));
        releaseIfDone(op);
        break;
      case OpType::kSendGrad: {
        InFlight& f = slot(op);
        if (!f.acts) {
          return Status::internal("gradient of micro-batch " + std::to_string(op.microBatch) +
                                  " sent before its backward on stage " + std::to_string(stage_));
        }
        BS_RETURN_IF_ERROR(sendFrom(op, f.acts->inputGrad));
        f.gradSent = true;
        releaseIfDone(op);
        break;
      }
      case OpType::kAllReduceGrads:
      case OpType::kReduceScatterGrads:
        BS_RETURN_IF_ERROR(completeGradients(op));
        break;
      case OpType::kOptimizerStep:
        BS_RETURN_IF_ERROR(optimizerStep());
        break;
      case OpType::kAllGatherParams:
        for (const ExecutorChunk& chunk : chunks_) {
          BS_RETURN_IF_ERROR(chunk.sync->gatherUpdatedParameters());
        }
        break;
    }
  }
  if (!inFlight_.empty()) {
    return Status::internal(std::to_string(inFlight_.size()) +
                            " micro-batches still in flight at the end of the step on stage " +
                            std::to_string(stage_));
  }
  return outcome_;
}

}  // namespace bubblescope::engine
