#include "engine/parallel/parallel_trainer.h"

#include <cmath>

#include "engine/cpu_gemm.h"
#include "engine/parallel/chunk_update.h"

namespace bubblescope::engine {

Result<double> meanStepLoss(double lossSum, int64_t microBatches, int64_t dpRanks, int64_t step) {
  const double loss = lossSum / (static_cast<double>(microBatches) * dpRanks);
  if (!std::isfinite(loss)) {
    return Status::internal("loss became " + std::to_string(loss) + " at step " +
                            std::to_string(step) + "; lower the learning rate");
  }
  return loss;
}

MemoryReport memoryOf(const Allocator& a) {
  using C = MemoryCategory;
  MemoryReport r;
  r.parameters = a.currentBytes(C::kParameters);
  r.gradients = a.currentBytes(C::kGradients);
  r.optimizer = a.currentBytes(C::kOptimizerState);
  r.activations = a.currentBytes(C::kActivations);
  r.peakParameters = a.peakBytes(C::kParameters);
  r.peakGradients = a.peakBytes(C::kGradients);
  r.peakOptimizer = a.peakBytes(C::kOptimizerState);
  r.peakActivations = a.peakBytes(C::kActivations);
  return r;
}

TrainerOptions singleRankEquivalent(const TrainerOptions& perRank, int32_t dp) {
  TrainerOptions o = perRank;
  o.microBatches = perRank.microBatches * dp;
  return o;
}

Result<std::unique_ptr<ParallelTrainer>> ParallelTrainer::create(const TrainerOptions& options,
                                                                 const ParallelOptions& parallel,
                                                                 Communicator& dp,
                                                                 Communicator* tp) {
  BS_RETURN_IF_ERROR(options.validate());
  if (!options.loadPath.empty()) {
    return Status::unsupported("a data-parallel run cannot resume from a checkpoint yet");
  }
  std::unique_ptr<ParallelTrainer> t(new ParallelTrainer(options, parallel, dp, tp));
  BS_RETURN_IF_ERROR(t->initialize());
  return t;
}

Status ParallelTrainer::initialize() {
  useSingleBlasThread();
  BS_ASSIGN_OR_RETURN(DataLoader loader, createDataLoader(options_, dataSource_));
  loader_ = std::make_unique<DataLoader>(std::move(loader));
  BS_ASSIGN_OR_RETURN(model_, GptModel::create(options_.model, &allocator_, {}, tpGroup_.get()));
  model_->initialize(options_.seed);  // the full model's values (tp slices of them)
  DataParallelOptions d;
  d.zeroStage = parallel_.zeroStage;
  d.overlap = parallel_.overlap;
  d.bucketElements = parallel_.bucketElements;
  d.optimizer = options_.optimizer;
  BS_ASSIGN_OR_RETURN(dp_sync_, DataParallel::create(*model_, allocator_, dp_, d));
  BS_ASSIGN_OR_RETURN(acts_, model_->newActivations(options_.batchSize, options_.model.seqLen));
  allocator_.resetPeaks();  // peaks describe training, not the full-shape initialisation
  return Status::ok();
}

void ParallelTrainer::setRecorder(tracer::Recorder* recorder) {
  recorder_ = recorder;
  dp_.setRecorder(recorder);
  if (tp_ != nullptr) tp_->setRecorder(recorder);
}

int64_t ParallelTrainer::tokensPerStep() const {
  return jobTokensPerStep(options_, dp_.size());
}

Result<StepResult> ParallelTrainer::step() {
  using tracer::EventKind;
  auto now = [this] { return recorder_ ? recorder_->now() : tracer::hostNowNs(); };
  StepResult result;
  result.step = step_;
  result.startNs = now();
  const int32_t m = options_.microBatches;
  const int32_t n = dp_.size();
  const int64_t b = options_.batchSize, t = options_.model.seqLen;
  const int64_t fwdFlops = model_->forwardFlops(b, t);
  const double lossScale = 1.0 / (static_cast<double>(m) * n);
  // ZeRO-3 gathers parameters and tp all-reduces inside forward and backward
  // (blocking): an enclosing compute span would hide that communication, so
  // the per-layer spans stand alone there.
  const bool outerSpans = !layout::shardsParameters(parallel_.zeroStage) && model_->tpSize() == 1;
  TraceContext trace{recorder_, static_cast<int32_t>(step_), -1, -1, -1};
  tracer::Recorder* outer = outerSpans ? recorder_ : nullptr;
  dp_sync_->zeroGradients();
  double lossSum = 0.0;
  for (int32_t mb = 0; mb < m; ++mb) {
    trace.microBatch = mb;
    const int32_t globalMicroBatch = dp_.rank() * m + mb;
    {
      auto info = trace.span(EventKind::kDataLoad, "data_load");
      info.lane = tracer::Lane::kData;
      tracer::ScopedSpan span(recorder_, info);
      loader_->fill(step_, globalMicroBatch, batch_);
    }
    dp_sync_->beginMicroBatch(static_cast<int32_t>(step_), mb, mb == m - 1);
    {
      tracer::ScopedSpan span(outer, trace.span(EventKind::kForward, "forward", fwdFlops));
      BS_ASSIGN_OR_RETURN(double loss,
                          model_->forward(*acts_, {batch_.tokens, {}, batch_.targets}, trace));
      lossSum += loss;
    }
    {
      tracer::ScopedSpan span(outer, trace.span(EventKind::kBackward, "backward", 2 * fwdFlops));
      BS_RETURN_IF_ERROR(model_->backward(*acts_, {}, lossScale, trace));
    }
    BS_RETURN_IF_ERROR(dp_sync_->endMicroBatch());
  }
  BS_RETURN_IF_ERROR(finishStep(options_, step_, -1, {dp_sync_.get()}, {dp_, nullptr, tp_},
                                recorder_, lossSum, result));
  result.tokens = tokensPerStep();
  ++step_;
  result.endNs = now();
  return result;
}

Result<NamedValues> ParallelTrainer::fullParameters() {
  return chunkParameters({dp_sync_.get()}, tp_);
}

}  // namespace bubblescope::engine
