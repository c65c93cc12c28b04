#include "engine/parallel/rank_trainer.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "engine/checkpoint.h"
#include "engine/cpu_backend.h"
#include "engine/cpu_gemm.h"
#include "engine/layout/stage_split.h"
#include "engine/parallel/data_parallel.h"
#include "engine/parallel/expert_data_parallel.h"
#include "engine/parallel/layout_checkpoint.h"
#include "engine/parallel/local_gradients.h"
#include "engine/parallel/scalar_all_reduce.h"
#include "tracer/clock.h"

namespace bubblescope::engine {

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

Result<std::unique_ptr<RankTrainer>> RankTrainer::create(const TrainerOptions& options,
                                                         RankSetup setup) {
  BS_RETURN_IF_ERROR(options.validate());
  const RankGroups& g = setup.groups;
  const bool single = g.dp == nullptr;
  if (single && (g.pp != nullptr || g.tp != nullptr)) {
    return Status::invalidArgument("a rank with a pp or tp group needs a dp group too");
  }
  if ((g.ep == nullptr) != (g.expertDp == nullptr) || (g.ep != nullptr && single)) {
    return Status::invalidArgument("expert parallelism needs dp, ep and expertDp groups together");
  }
  if (g.ep != nullptr && g.ep->size() > 1) {
    if (g.tp != nullptr && g.tp->size() > 1) {
      return Status::unsupported("expert parallelism does not combine with tensor parallelism");
    }
    if (layout::shardsGradients(setup.parallel.zeroStage)) {
      return Status::unsupported(
          "expert parallelism supports ZeRO 0 and 1, not ZeRO 2 or 3 (their per-layer "
          "collectives would interleave with the expert all-to-alls)");
    }
  }
  if ((g.dpIntraNode == nullptr) != (g.dpInterNode == nullptr) ||
      (g.dpIntraNode != nullptr && (single || g.ep != nullptr))) {
    return Status::invalidArgument(
        "a hierarchical all-reduce needs a dp group and both node communicators, and no ep");
  }
  if (!single && !options.loadPath.empty()) {
    return Status::unsupported("a parallel run cannot resume from a checkpoint yet");
  }
  const PipelineOptions& pipeline = setup.pipeline;
  const bool interleaved = pipeline.schedule == layout::ScheduleKind::kInterleaved;
  if (interleaved ? pipeline.chunks < 2 || pipeline.chunks > 8 : pipeline.chunks != 1) {
    return Status::invalidArgument(
        std::string("pipeline schedule ") + layout::scheduleKindName(pipeline.schedule) + " with " +
        std::to_string(pipeline.chunks) +
        " chunks per stage: interleaved takes 2 to 8, the others exactly 1");
  }
  if (!setup.backend) setup.backend = std::make_unique<CpuBackend>();
  std::unique_ptr<RankTrainer> t(new RankTrainer(options, std::move(setup)));
  BS_RETURN_IF_ERROR(t->initialize());
  return t;
}

RankTrainer::RankTrainer(const TrainerOptions& options, RankSetup setup)
    : options_(options),
      parallel_(setup.parallel),
      pipeline_(std::move(setup.pipeline)),
      groups_(setup.groups),
      backend_(std::move(setup.backend)) {
  if (groups_.tp != nullptr) tpGroup_ = std::make_unique<CommTensorParallel>(*groups_.tp);
  if (groups_.ep != nullptr && groups_.ep->size() > 1) {
    epGroup_ = std::make_unique<CommExpertParallel>(*groups_.ep);
  }
}

RankTrainer::~RankTrainer() = default;

Status RankTrainer::initialize() {
  useSingleBlasThread();
  std::optional<Checkpoint> checkpoint;
  if (!options_.loadPath.empty()) {
    // The checkpoint's settings replace the given ones before anything is built.
    BS_ASSIGN_OR_RETURN(Checkpoint ckpt, Checkpoint::read(options_.loadPath));
    BS_RETURN_IF_ERROR(ckpt.checkModel(options_.model));
    BS_RETURN_IF_ERROR(options_.applySettingsJson(ckpt.meta().trainerJson)
                           .withContext("checkpoint '" + options_.loadPath + "'"));
    BS_RETURN_IF_ERROR(options_.validate().withContext("checkpoint '" + options_.loadPath + "'"));
    checkpoint.emplace(std::move(ckpt));
  }
  const int32_t p = groups_.pp != nullptr ? groups_.pp->size() : 1;
  stage_ = groups_.pp != nullptr ? groups_.pp->rank() : 0;
  // A process alone has no dp group to shard over: ZeRO does not apply.
  const layout::ZeroStage zero =
      groups_.dp != nullptr ? parallel_.zeroStage : layout::ZeroStage::kNone;
  BS_ASSIGN_OR_RETURN(schedule_, layout::makeSchedule(pipeline_.schedule, p, options_.microBatches,
                                                      pipeline_.chunks, zero));
  BS_ASSIGN_OR_RETURN(
      split_, layout::stageSplit(options_.model, p, pipeline_.chunks, pipeline_.stageLayers));
  BS_ASSIGN_OR_RETURN(DataLoader loader, createDataLoader(options_, dataSource_));
  loader_ = std::make_unique<DataLoader>(std::move(loader));
  DataParallelOptions d;
  d.zeroStage = parallel_.zeroStage;
  d.overlap = parallel_.overlap;
  d.bucketElements = parallel_.bucketElements;
  d.compression = parallel_.compression;
  d.hostDp = groups_.dpHost;
  d.intraNode = groups_.dpIntraNode;
  d.interNode = groups_.dpInterNode;
  d.traffic = &gradTraffic_;
  d.optimizer = options_.optimizer;
  std::vector<ExecutorChunk> chunks;
  for (int32_t c = 0; c < pipeline_.chunks; ++c) {
    BS_ASSIGN_OR_RETURN(auto model, GptModel::create(options_.model, *backend_,
                                                     pipelineSlots(split_, c * p + stage_),
                                                     tpGroup_.get(), epGroup_.get()));
    model->initialize(options_.seed);  // the same weights as the full model's slots
    std::unique_ptr<GradientSync> chunkSync;
    const auto params = model->parameters();
    const bool experts =
        std::any_of(params.begin(), params.end(), [](const Parameter* q) { return q->expert; });
    if (groups_.dp == nullptr) {
      chunkSync = std::make_unique<LocalGradients>(*model, *backend_, options_.optimizer);
    } else if (epGroup_ != nullptr && experts) {
      BS_ASSIGN_OR_RETURN(chunkSync,
                          ExpertDataParallel::create(*model, backend_->allocator(), *groups_.dp,
                                                     *groups_.expertDp, *groups_.ep, d));
    } else {
      BS_ASSIGN_OR_RETURN(chunkSync,
                          DataParallel::create(*model, backend_->allocator(), *groups_.dp, d));
    }
    chunks.push_back({model.get(), chunkSync.get()});
    models_.push_back(std::move(model));
    syncs_.push_back(std::move(chunkSync));
  }
  if (checkpoint) {
    // A single process (create()): one chunk, LocalGradients.
    auto& local = static_cast<LocalGradients&>(*syncs_.front());
    BS_RETURN_IF_ERROR(checkpoint->restore(*models_.front(), local.optimizer()));
    step_ = checkpoint->meta().step;
  }
  executor_ = std::make_unique<ScheduleExecutor>(
      std::move(chunks), stage_, p, ExecutorGroups{groups_.pp, groups_.tp}, *loader_,
      backend_->allocator(), options_, pipeline_.recompute);
  BS_RETURN_IF_ERROR(executor_->reserveActivations());
  backend_->allocator().resetPeaks();  // peaks describe training, not the initialisation
  return Status::ok();
}

Status RankTrainer::save(const std::string& path, bool* wrote) {
  if (epGroup_ != nullptr) {
    return Status::unsupported("--save: checkpoints of an expert-parallel run (ep " +
                               std::to_string(epGroup_->size()) + ") are not supported yet");
  }
  CheckpointMeta meta;
  meta.model = options_.model;
  meta.step = step_;
  // The single process on the same global batch: M x dp micro-batches.
  const int32_t dp = groups_.dp != nullptr ? groups_.dp->size() : 1;
  meta.trainerJson = singleRankEquivalent(options_, dp).settingsJson();
  bool written = false;
  if (groups_.dp == nullptr) {
    auto& local = static_cast<LocalGradients&>(*syncs_.front());
    BS_RETURN_IF_ERROR(writeCheckpoint(path, *models_.front(), local.optimizer(), meta));
    written = true;
  } else {
    std::vector<GradientSync*> syncs;
    for (const auto& sync : syncs_) syncs.push_back(sync.get());
    Backend* device = backend_->device() != Device::kHost ? backend_.get() : nullptr;
    BS_RETURN_IF_ERROR(saveLayoutCheckpoint(
        path, syncs, {groups_.dp, groups_.tp, groups_.pp, device}, split_, meta, written));
  }
  if (wrote != nullptr) *wrote = written;
  return Status::ok();
}

void RankTrainer::setRecorder(tracer::Recorder* recorder) {
  recorder_ = recorder;
  for (Communicator* group : {groups_.dp, groups_.pp, groups_.tp, groups_.ep, groups_.expertDp,
                              groups_.dpIntraNode, groups_.dpInterNode, groups_.dpHost}) {
    if (group != nullptr) group->setRecorder(recorder);
  }
  executor_->setRecorder(recorder);
}

int64_t RankTrainer::parameterCount() const {
  int64_t total = 0;
  for (const auto& sync : syncs_) total += sync->parameterCount();
  return total;
}

int64_t RankTrainer::tokensPerStep() const {
  const int64_t dp = groups_.dp != nullptr ? groups_.dp->size() : 1;
  return options_.batchSize * options_.model.seqLen * options_.microBatches * dp;
}

Result<StepResult> RankTrainer::step() {
  auto now = [this] { return recorder_ ? recorder_->now() : tracer::hostNowNs(); };
  StepResult result;
  result.step = step_;
  result.startNs = now();
  const int32_t m = options_.microBatches;
  const int32_t n = groups_.dp != nullptr ? groups_.dp->size() : 1;
  const int32_t dpRank = groups_.dp != nullptr ? groups_.dp->rank() : 0;
  StepContext context;
  context.step = static_cast<int32_t>(step_);
  context.firstGlobalMicroBatch = dpRank * m;
  context.lossScale = 1.0 / (static_cast<double>(m) * n);
  BS_ASSIGN_OR_RETURN(const StepOutcome outcome,
                      executor_->runStep(schedule_.stageOps[stage_], context));
  result.gradNorm = outcome.gradNorm;
  result.lr = outcome.lr;
  // The loss lives on the head's stage: summed over pp, then over dp.
  double lossSum = outcome.lossSum;
  CommTrace lossTrace;
  lossTrace.name = "loss";
  lossTrace.step = context.step;
  if (groups_.pp != nullptr && groups_.pp->size() > 1) {
    BS_RETURN_IF_ERROR(allReduceScalar(*groups_.pp, *backend_, lossSum, lossTrace));
  }
  if (n > 1) BS_RETURN_IF_ERROR(allReduceScalar(*groups_.dp, *backend_, lossSum, lossTrace));
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

Result<NamedValues> RankTrainer::parameters() {
  NamedValues out;
  std::vector<Parameter*> params;
  for (const auto& sync : syncs_) BS_RETURN_IF_ERROR(sync->appendParameters(out, params));
  if (groups_.tp != nullptr && groups_.tp->size() > 1) {
    Backend* device = backend_->device() != Device::kHost ? backend_.get() : nullptr;
    BS_RETURN_IF_ERROR(assembleTpShards(params, out, *groups_.tp, device));
  }
  return out;
}

}  // namespace bubblescope::engine
