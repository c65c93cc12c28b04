#include "engine/parallel/pipeline_executor.h"

#include <algorithm>

namespace bubblescope::engine {
namespace {

using layout::Op;
using layout::OpType;
using tracer::EventKind;

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

PipelineExecutor::PipelineExecutor(std::vector<PipelineChunk> chunks, int32_t stage,
                                   Communicator& pp, const DataLoader& loader, Allocator& allocator,
                                   int64_t b, int64_t t, bool recompute)
    : chunks_(std::move(chunks)),
      stage_(stage),
      pp_(pp),
      loader_(loader),
      allocator_(allocator),
      b_(b),
      t_(t),
      c_(chunks_.front().model->config().hidden),
      recompute_(recompute),
      freeActs_(chunks_.size()) {}

PipelineExecutor::~PipelineExecutor() = default;

CommTrace PipelineExecutor::commTrace(const char* name, const Op& op) const {
  CommTrace trace;
  trace.name = name;
  trace.step = context_.step;
  trace.microBatch = op.microBatch;
  trace.stage = stage_;
  trace.chunk = op.chunk;
  return trace;
}

Status PipelineExecutor::receive(const Op& op, std::span<float> into) {
  const bool activation = op.type == OpType::kRecvActivation;
  const int32_t tag = tagOf(activation ? 0 : 1, op.microBatch, op.chunk);
  const int64_t waitStart = pp_.nowNs();
  BS_ASSIGN_OR_RETURN(const bool waited, pp_.awaitMessage(op.peer, tag));
  if (waited && recorder_ != nullptr) {
    tracer::SpanInfo info;
    info.kind = EventKind::kWait;
    info.lane = tracer::Lane::kPipeline;
    info.name = activation ? "wait_activation" : "wait_grad";
    info.step = context_.step;
    info.microBatch = op.microBatch;
    info.stage = stage_;
    info.chunk = op.chunk;
    info.dim = tracer::ParallelDim::kPp;
    info.peer = pp_.worldRankOf(op.peer);
    recorder_->record(info, waitStart, pp_.nowNs());
  }
  return pp_.recv(into, op.peer, tag, commTrace(activation ? "recv_activation" : "recv_grad", op));
}

Status PipelineExecutor::sendFrom(const Op& op, std::span<const float> data) {
  const bool activation = op.type == OpType::kSendActivation;
  PendingSend& s = sends_.emplace_back();
  s.buffer.assign(data.begin(), data.end());
  CommTrace trace = commTrace(activation ? "send_activation" : "send_grad", op);
  trace.spanAtStart = true;  // completion is only observed at the step's end
  // The receiver's chunk: the next virtual stage's for an activation, the
  // previous one's for a gradient.
  const int32_t consumer = (virtualStage(op.chunk) + (activation ? 1 : -1)) / pp_.size();
  BS_ASSIGN_OR_RETURN(
      s.handle,
      pp_.startSend(s.buffer, op.peer, tagOf(activation ? 0 : 1, op.microBatch, consumer), trace));
  return Status::ok();
}

Status PipelineExecutor::completeSends() {
  for (PendingSend& s : sends_) BS_RETURN_IF_ERROR(pp_.wait(s.handle));
  sends_.clear();
  return Status::ok();
}

Status PipelineExecutor::forward(const Op& op, EventKind kind, double& lossSum) {
  GptModel& model = *chunks_.at(op.chunk).model;
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
  TraceContext trace{recorder_, context_.step, op.microBatch, stage_, op.chunk};
  StageInput input;
  if (model.hasEmbedding() || model.hasHead()) {
    auto info = trace.span(EventKind::kDataLoad, "data_load");
    info.lane = tracer::Lane::kData;
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
  // Under tp the model's all-reduces block inside forward, B and backward:
  // an op-level compute span would hide them, so the per-layer spans (which
  // end before each all-reduce) stand alone there.
  tracer::ScopedSpan span(opSpans(model), trace.span(kind, again ? "recompute" : "forward",
                                                     model.forwardFlops(b_, t_)));
  trace.forwardKind = kind;  // the layers' spans: kForward, or kRecompute when again
  BS_ASSIGN_OR_RETURN(const double loss, model.forward(*f.acts, input, trace));
  if (model.hasHead() && !again) lossSum += loss;
  f.dropped = false;
  return Status::ok();
}

void PipelineExecutor::dropActivations(const Op& op) {
  InFlight& f = slot(op);
  if (f.acts) freeActs_[op.chunk].push_back(std::move(f.acts));
  f.dropped = true;
}

Status PipelineExecutor::backward(const Op& op, bool lastOfChunk) {
  const PipelineChunk& chunk = chunks_.at(op.chunk);
  InFlight& f = slot(op);
  BS_RETURN_IF_ERROR(activationsFor(op));
  TraceContext trace{recorder_, context_.step, op.microBatch, stage_, op.chunk};
  chunk.sync->beginMicroBatch(context_.step, op.microBatch, lastOfChunk);
  {
    tracer::ScopedSpan span(
        opSpans(*chunk.model),
        trace.span(EventKind::kBackward, "backward", 2 * chunk.model->forwardFlops(b_, t_)));
    BS_RETURN_IF_ERROR(chunk.model->backward(*f.acts, outputGradOf(op), context_.lossScale, trace));
  }
  f.backwardDone = true;
  return chunk.sync->endMicroBatch();
}

Status PipelineExecutor::backwardInput(const Op& op) {
  const PipelineChunk& chunk = chunks_.at(op.chunk);
  InFlight& f = slot(op);
  BS_RETURN_IF_ERROR(activationsFor(op));
  TraceContext trace{recorder_, context_.step, op.microBatch, stage_, op.chunk};
  chunk.sync->beginBackwardInput(context_.step, op.microBatch);
  {
    tracer::ScopedSpan span(
        opSpans(*chunk.model),
        trace.span(EventKind::kBackwardInput, "backward_input", chunk.model->forwardFlops(b_, t_)));
    BS_RETURN_IF_ERROR(
        chunk.model->backwardInput(*f.acts, outputGradOf(op), context_.lossScale, trace));
  }
  // W needs neither: B kept the output gradient, and no recompute follows.
  std::vector<float>().swap(f.outputGrad);
  f.input = Tensor();
  return Status::ok();
}

Status PipelineExecutor::backwardWeight(const Op& op, bool lastOfChunk) {
  const PipelineChunk& chunk = chunks_.at(op.chunk);
  InFlight& f = slot(op);
  if (!f.acts || !f.acts->weightGradPending) {
    return Status::internal("weight gradient of micro-batch " + std::to_string(op.microBatch) +
                            " before its input gradient on stage " + std::to_string(stage_));
  }
  TraceContext trace{recorder_, context_.step, op.microBatch, stage_, op.chunk};
  chunk.sync->beginMicroBatch(context_.step, op.microBatch, lastOfChunk);
  {
    tracer::ScopedSpan span(recorder_, trace.span(EventKind::kBackwardWeight, "backward_weight",
                                                  chunk.model->forwardFlops(b_, t_)));
    BS_RETURN_IF_ERROR(chunk.model->backwardWeight(*f.acts, trace));
  }
  f.backwardDone = true;
  return chunk.sync->endMicroBatch();
}

Status PipelineExecutor::activationsFor(const Op& op) {
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

std::span<const float> PipelineExecutor::outputGradOf(const Op& op) {
  if (chunks_.at(op.chunk).model->hasHead()) return {};
  return slot(op).outputGrad;
}

void PipelineExecutor::releaseIfDone(const Op& op) {
  auto it = inFlight_.find({op.microBatch, op.chunk});
  if (it == inFlight_.end()) return;
  const InFlight& f = it->second;
  // Done: its parameter gradients are in (after backward or W) and its input
  // gradient is on its way (or the first virtual stage has none to send).
  if (f.backwardDone && (f.gradSent || virtualStage(op.chunk) == 0)) release(op);
}

void PipelineExecutor::release(const Op& op) {
  auto it = inFlight_.find({op.microBatch, op.chunk});
  if (it == inFlight_.end()) return;
  if (it->second.acts) freeActs_[op.chunk].push_back(std::move(it->second.acts));
  inFlight_.erase(it);
}

Result<double> PipelineExecutor::runStep(const std::vector<Op>& ops,
                                         const PipelineStepContext& context) {
  context_ = context;
  // The last backward (or W) of each chunk: a chunk's gradients are complete
  // after it, so ZeRO 0/1 reduce the chunk's buckets there.
  std::vector<size_t> lastBackward(chunks_.size(), ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (op.microBatch > kMaxMicroBatches || op.chunk >= kMaxChunks ||
        op.chunk >= static_cast<int32_t>(chunks_.size())) {
      return Status::invalidArgument("pipeline op " + layout::toString(op) +
                                     " is outside the executor's limits (micro-batch <= 2047, "
                                     "chunk < chunks held)");
    }
    if (op.type == OpType::kBackward || op.type == OpType::kBackwardWeight) {
      lastBackward[op.chunk] = i;
    }
  }
  double lossSum = 0.0;
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
        f.outputGrad.resize(static_cast<size_t>(b_ * t_ * c_));
        BS_RETURN_IF_ERROR(receive(op, f.outputGrad));
        break;
      }
      case OpType::kForward:
        BS_RETURN_IF_ERROR(forward(op, EventKind::kForward, lossSum));
        // The last virtual stage sends nothing: drop right away.
        if (recompute_ &&
            virtualStage(op.chunk) == pp_.size() * static_cast<int32_t>(chunks_.size()) - 1) {
          dropActivations(op);
        }
        break;
      case OpType::kSendActivation: {
        const InFlight& f = slot(op);
        BS_RETURN_IF_ERROR(sendFrom(op, f.acts->output().span()));
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
        BS_RETURN_IF_ERROR(sendFrom(op, f.acts->inputGrad.span()));
        f.gradSent = true;
        releaseIfDone(op);
        break;
      }
      case OpType::kAllReduceGrads:
      case OpType::kReduceScatterGrads:
        BS_RETURN_IF_ERROR(completeSends());
        break;
      case OpType::kOptimizerStep:
        break;  // the caller's, after the global gradient norm
    }
  }
  BS_RETURN_IF_ERROR(completeSends());
  if (!inFlight_.empty()) {
    return Status::internal(std::to_string(inFlight_.size()) +
                            " micro-batches still in flight at the end of the step on stage " +
                            std::to_string(stage_));
  }
  return lossSum;
}

}  // namespace bubblescope::engine
