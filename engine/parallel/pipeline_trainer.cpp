#include "engine/parallel/pipeline_trainer.h"

#include <cmath>

#include "engine/cpu_gemm.h"
#include "engine/layout/stage_split.h"
#include "engine/parallel/chunk_update.h"

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
                                                                 Communicator& dp, Communicator& pp,
                                                                 Communicator* tp) {
  BS_RETURN_IF_ERROR(options.validate());
  if (!options.loadPath.empty()) {
    return Status::unsupported("a pipeline-parallel run cannot resume from a checkpoint yet");
  }
  const bool interleaved = pipeline.schedule == layout::ScheduleKind::kInterleaved;
  if (interleaved ? pipeline.chunks < 2 || pipeline.chunks > 8 : pipeline.chunks != 1) {
    return Status::invalidArgument(
        std::string("pipeline schedule ") + layout::scheduleKindName(pipeline.schedule) + " with " +
        std::to_string(pipeline.chunks) +
        " chunks per stage: interleaved takes 2 to 8, the others exactly 1");
  }
  std::unique_ptr<PipelineTrainer> t(new PipelineTrainer(options, parallel, pipeline, dp, pp, tp));
  BS_RETURN_IF_ERROR(t->initialize());
  return t;
}

PipelineTrainer::~PipelineTrainer() = default;

Status PipelineTrainer::initialize() {
  useSingleBlasThread();
  const int32_t p = pp_.size();
  const layout::GradSync sync = layout::gradSyncFor(parallel_.zeroStage);
  BS_ASSIGN_OR_RETURN(schedule_, layout::makeSchedule(pipeline_.schedule, p, options_.microBatches,
                                                      pipeline_.chunks, sync));
  BS_ASSIGN_OR_RETURN(
      const std::vector<int32_t> split,
      layout::stageSplit(options_.model, p, pipeline_.chunks, pipeline_.stageLayers));
  BS_ASSIGN_OR_RETURN(DataLoader loader, createDataLoader(options_, dataSource_));
  loader_ = std::make_unique<DataLoader>(std::move(loader));
  DataParallelOptions d;
  d.zeroStage = parallel_.zeroStage;
  d.overlap = parallel_.overlap;
  d.bucketElements = parallel_.bucketElements;
  d.optimizer = options_.optimizer;
  std::vector<PipelineChunk> chunks;
  for (int32_t c = 0; c < pipeline_.chunks; ++c) {
    BS_ASSIGN_OR_RETURN(auto model,
                        GptModel::create(options_.model, &allocator_,
                                         pipelineSlots(split, c * p + stage()), tpGroup_.get()));
    model->initialize(options_.seed);  // the same weights as the full model's slots
    BS_ASSIGN_OR_RETURN(auto sync, DataParallel::create(*model, allocator_, dp_, d));
    chunks.push_back({model.get(), sync.get()});
    models_.push_back(std::move(model));
    syncs_.push_back(std::move(sync));
  }
  executor_ = std::make_unique<PipelineExecutor>(std::move(chunks), stage(), pp_, *loader_,
                                                 allocator_, options_.batchSize,
                                                 options_.model.seqLen, pipeline_.recompute);
  allocator_.resetPeaks();
  return Status::ok();
}

void PipelineTrainer::setRecorder(tracer::Recorder* recorder) {
  recorder_ = recorder;
  dp_.setRecorder(recorder);
  pp_.setRecorder(recorder);
  if (tp_ != nullptr) tp_->setRecorder(recorder);
  executor_->setRecorder(recorder);
}

int64_t PipelineTrainer::parameterCount() const {
  int64_t total = 0;
  for (const auto& sync : syncs_) total += sync->flat().total();
  return total;
}

int64_t PipelineTrainer::tokensPerStep() const {
  return jobTokensPerStep(options_, dp_.size());
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
  for (const auto& sync : syncs_) sync->zeroGradients();
  BS_ASSIGN_OR_RETURN(double lossSum, executor_->runStep(schedule_.stageOps[stage()], context));
  // The stage's chunks' norms and losses are summed over stages (pp), the
  // norm over tp, the loss over dp.
  BS_RETURN_IF_ERROR(finishStep(options_, step_, stage(), dataParallels(), {dp_, &pp_, tp_},
                                recorder_, lossSum, result));
  result.tokens = tokensPerStep();
  ++step_;
  result.endNs = now();
  return result;
}

Result<NamedValues> PipelineTrainer::stageParameters() {
  return chunkParameters(dataParallels(), tp_);
}

std::vector<DataParallel*> PipelineTrainer::dataParallels() const {
  std::vector<DataParallel*> out;
  for (const auto& sync : syncs_) out.push_back(sync.get());
  return out;
}

}  // namespace bubblescope::engine
