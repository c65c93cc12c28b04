#include "engine/parallel/pipeline_trainer.h"

#include <cmath>

#include "engine/cpu_gemm.h"
#include "engine/layout/stage_split.h"

namespace bubblescope::engine {

LayerRange pipelineSlots(const std::vector<int32_t>& split, int32_t virtualStage) {
  const std::vector<int32_t> first = layout::firstLayers(split);
  const int32_t n = static_cast<int32_t>(split.size());
  int32_t layers = 0;
  for (int32_t count : split) layers += count;
  LayerRange r;
  r.first = virtualStage == 0 ? 0 : 1 + first[virtualStage];
  r.last = virtualStage == n - 1 ? layers + 2 : 1 + first[virtualStage] + split[virtualStage];
  return r;
}

Result<std::unique_ptr<PipelineTrainer>> PipelineTrainer::create(const TrainerOptions& options,
                                                                 const ParallelOptions& parallel,
                                                                 const PipelineOptions& pipeline,
                                                                 Communicator& dp,
                                                                 Communicator& pp) {
  BS_RETURN_IF_ERROR(options.validate());
  if (!options.loadPath.empty()) {
    return Status::unsupported("a pipeline-parallel run cannot resume from a checkpoint yet");
  }
  if (pipeline.chunks != 1 || pipeline.schedule == layout::ScheduleKind::kInterleaved ||
      pipeline.schedule == layout::ScheduleKind::kZeroBubbleH1) {
    return Status::unsupported(std::string("pipeline schedule ") +
                               layout::scheduleKindName(pipeline.schedule) +
                               " is not implemented yet by the runtime; use gpipe or 1f1b");
  }
  std::unique_ptr<PipelineTrainer> t(new PipelineTrainer(options, parallel, pipeline, dp, pp));
  BS_RETURN_IF_ERROR(t->initialize());
  return t;
}

PipelineTrainer::~PipelineTrainer() = default;

Status PipelineTrainer::initialize() {
  useSingleBlasThread();
  const int32_t p = pp_.size();
  const layout::GradSync sync =
      parallel_.zeroStage >= 1 ? layout::GradSync::kReduceScatter : layout::GradSync::kAllReduce;
  BS_ASSIGN_OR_RETURN(schedule_, layout::makeSchedule(pipeline_.schedule, p, options_.microBatches,
                                                      pipeline_.chunks, sync));
  BS_ASSIGN_OR_RETURN(
      const std::vector<int32_t> split,
      layout::stageSplit(options_.model, p, pipeline_.chunks, pipeline_.stageLayers));
  BS_ASSIGN_OR_RETURN(DataLoader loader, createDataLoader(options_, dataSource_));
  loader_ = std::make_unique<DataLoader>(std::move(loader));
  BS_ASSIGN_OR_RETURN(model_,
                      GptModel::create(options_.model, &allocator_, pipelineSlots(split, stage())));
  model_->initialize(options_.seed);  // the same weights as the full model's slots
  DataParallelOptions d;
  d.zeroStage = parallel_.zeroStage;
  d.overlap = parallel_.overlap;
  d.bucketElements = parallel_.bucketElements;
  d.optimizer = options_.optimizer;
  BS_ASSIGN_OR_RETURN(dp_sync_, DataParallel::create(*model_, allocator_, dp_, d));
  executor_ = std::make_unique<PipelineExecutor>(
      std::vector<PipelineChunk>{{model_.get(), dp_sync_.get()}}, stage(), pp_, *loader_,
      options_.batchSize, options_.model.seqLen);
  allocator_.resetPeaks();
  return Status::ok();
}

void PipelineTrainer::setRecorder(tracer::Recorder* recorder) {
  recorder_ = recorder;
  dp_.setRecorder(recorder);
  pp_.setRecorder(recorder);
  executor_->setRecorder(recorder);
}

int64_t PipelineTrainer::tokensPerStep() const {
  return options_.batchSize * options_.model.seqLen * options_.microBatches * dp_.size();
}

Result<StepResult> PipelineTrainer::step() {
  using tracer::EventKind;
  auto now = [this] { return recorder_ ? recorder_->now() : tracer::hostNowNs(); };
  StepResult result;
  result.step = step_;
  result.startNs = now();
  const int32_t m = options_.microBatches;
  const int32_t n = dp_.size();
  PipelineStepContext context;
  context.step = static_cast<int32_t>(step_);
  context.firstGlobalMicroBatch = dp_.rank() * m;
  context.lossScale = 1.0 / (static_cast<double>(m) * n);
  dp_sync_->zeroGradients();
  BS_ASSIGN_OR_RETURN(double lossSum, executor_->runStep(schedule_.stageOps[stage()], context));
  // Global norm: this stage's sum of squares (over its dp shards), summed over stages.
  BS_ASSIGN_OR_RETURN(double squares, dp_sync_->gradSquaredSum());
  CommTrace normTrace;
  normTrace.name = "grad_norm";
  normTrace.step = context.step;
  BS_RETURN_IF_ERROR(pp_.allReduce(std::span<double>(&squares, 1), normTrace));
  result.gradNorm = std::sqrt(squares);
  result.lr = options_.schedule.at(step_);
  {
    TraceContext trace{recorder_, context.step, -1, stage(), -1};
    tracer::ScopedSpan span(recorder_, trace.span(EventKind::kOptimizer, "optimizer"));
    if (options_.gradClip > 0.0 && result.gradNorm > options_.gradClip) {
      dp_sync_->scaleGradients(static_cast<float>(options_.gradClip / (result.gradNorm + 1e-6)));
    }
    dp_sync_->applyOptimizer(result.lr);
  }
  BS_RETURN_IF_ERROR(dp_sync_->gatherUpdatedParameters());
  CommTrace lossTrace;
  lossTrace.name = "loss";
  lossTrace.step = context.step;
  BS_RETURN_IF_ERROR(pp_.allReduce(std::span<double>(&lossSum, 1), lossTrace));
  if (n > 1) BS_RETURN_IF_ERROR(dp_.allReduce(std::span<double>(&lossSum, 1), lossTrace));
  result.loss = lossSum / (static_cast<double>(m) * n);
  if (!std::isfinite(result.loss)) {
    return Status::internal("loss became " + std::to_string(result.loss) + " at step " +
                            std::to_string(step_) + "; lower the learning rate");
  }
  result.tokens = tokensPerStep();
  ++step_;
  result.endNs = now();
  return result;
}

Result<std::vector<std::pair<std::string, std::vector<float>>>> PipelineTrainer::stageParameters() {
  std::vector<float> flat;
  BS_RETURN_IF_ERROR(dp_sync_->gatherParameters(flat));
  std::vector<std::pair<std::string, std::vector<float>>> out;
  for (const FlatEntry& e : dp_sync_->flat().entries()) {
    out.emplace_back(e.param->name,
                     std::vector<float>(flat.begin() + e.range.lo, flat.begin() + e.range.hi));
  }
  return out;
}

}  // namespace bubblescope::engine
