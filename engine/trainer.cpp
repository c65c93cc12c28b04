#include "engine/trainer.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/checkpoint.h"
#include "engine/cpu_backend.h"
#include "engine/cpu_gemm.h"
#include "engine/synthetic_corpus.h"
#include "engine/tokenizer.h"
#include "tracer/clock.h"

namespace bubblescope::engine {
namespace {
constexpr uint64_t kDataStream = 0xda7a;  // data order seed = mixSeed(seed, kDataStream)
}  // namespace

Status TrainerOptions::validate() const {
  BS_RETURN_IF_ERROR(layout::validate(model));
  if (batchSize <= 0) {
    return Status::invalidArgument("batch size must be positive, got " + std::to_string(batchSize));
  }
  if (microBatches <= 0) {
    return Status::invalidArgument("micro-batches must be positive, got " +
                                   std::to_string(microBatches));
  }
  BS_RETURN_IF_ERROR(schedule.validate());
  BS_RETURN_IF_ERROR(optimizer.validate());
  if (!std::isfinite(gradClip)) return Status::invalidArgument("gradient clip must be finite");
  return Status::ok();
}

std::string TrainerOptions::settingsJson() const {
  const nlohmann::json j = {
      {"seed", seed},
      {"batch_size", batchSize},
      {"micro_batches", microBatches},
      {"lr", schedule.peak},
      {"min_lr_ratio", schedule.minRatio},
      {"warmup_steps", schedule.warmupSteps},
      {"total_steps", schedule.totalSteps},
      {"beta1", optimizer.beta1},
      {"beta2", optimizer.beta2},
      {"eps", optimizer.eps},
      {"weight_decay", optimizer.weightDecay},
      {"grad_clip", gradClip},
  };
  return j.dump();
}

Status TrainerOptions::applySettingsJson(const std::string& json) {
  const auto j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status::corrupt("trainer settings are not a JSON object");
  auto get = [&](const char* key, auto& out) -> Status {
    if (!j.contains(key) || !j[key].is_number()) {
      return Status::corrupt(std::string("trainer settings lack a number '") + key + "'");
    }
    out = j[key].get<std::remove_reference_t<decltype(out)>>();
    return Status::ok();
  };
  BS_RETURN_IF_ERROR(get("seed", seed));
  BS_RETURN_IF_ERROR(get("batch_size", batchSize));
  BS_RETURN_IF_ERROR(get("micro_batches", microBatches));
  BS_RETURN_IF_ERROR(get("lr", schedule.peak));
  BS_RETURN_IF_ERROR(get("min_lr_ratio", schedule.minRatio));
  BS_RETURN_IF_ERROR(get("warmup_steps", schedule.warmupSteps));
  BS_RETURN_IF_ERROR(get("total_steps", schedule.totalSteps));
  BS_RETURN_IF_ERROR(get("beta1", optimizer.beta1));
  BS_RETURN_IF_ERROR(get("beta2", optimizer.beta2));
  BS_RETURN_IF_ERROR(get("eps", optimizer.eps));
  BS_RETURN_IF_ERROR(get("weight_decay", optimizer.weightDecay));
  BS_RETURN_IF_ERROR(get("grad_clip", gradClip));
  return Status::ok();
}

Result<DataLoader> createDataLoader(const TrainerOptions& options, std::string& source) {
  std::vector<int32_t> stream;
  if (options.dataPath.empty()) {
    source = "the synthetic corpus";
    stream = ByteTokenizer::encode(syntheticCorpus());
  } else {
    source = "data file '" + options.dataPath + "'";
    BS_ASSIGN_OR_RETURN(stream, loadTokenFile(options.dataPath));
  }
  return DataLoader::create(std::move(stream), source, options.model.vocabSize,
                            mixSeed(options.seed, kDataStream), options.batchSize,
                            options.model.seqLen);
}

Result<std::unique_ptr<Trainer>> Trainer::create(const TrainerOptions& options,
                                                 tracer::Recorder* recorder,
                                                 std::unique_ptr<Backend> backend) {
  BS_RETURN_IF_ERROR(options.validate());
  if (!backend) backend = std::make_unique<CpuBackend>();
  if (backend->device() != Device::kHost && !options.loadPath.empty()) {
    return Status::unsupported("--load: checkpoints of a run on " + backend->description() +
                               " are not supported yet; train on the cpu backend");
  }
  std::unique_ptr<Trainer> trainer(new Trainer(options, recorder, std::move(backend)));
  BS_RETURN_IF_ERROR(trainer->initialize());
  return trainer;
}

Status Trainer::initialize() {
  useSingleBlasThread();
  std::optional<Checkpoint> checkpoint;
  if (!options_.loadPath.empty()) {
    BS_ASSIGN_OR_RETURN(Checkpoint ckpt, Checkpoint::read(options_.loadPath));
    BS_RETURN_IF_ERROR(ckpt.checkModel(options_.model));
    BS_RETURN_IF_ERROR(options_.applySettingsJson(ckpt.meta().trainerJson)
                           .withContext("checkpoint '" + options_.loadPath + "'"));
    BS_RETURN_IF_ERROR(options_.validate().withContext("checkpoint '" + options_.loadPath + "'"));
    checkpoint.emplace(std::move(ckpt));
  }

  BS_ASSIGN_OR_RETURN(DataLoader loader, createDataLoader(options_, dataSource_));
  loader_ = std::make_unique<DataLoader>(std::move(loader));

  BS_ASSIGN_OR_RETURN(model_, GptModel::create(options_.model, *backend_));
  model_->initialize(options_.seed);
  optimizer_ =
      std::make_unique<AdamW>(model_->parameters(), options_.optimizer, &backend_->allocator());
  BS_ASSIGN_OR_RETURN(acts_, model_->newActivations(options_.batchSize, options_.model.seqLen));
  if (checkpoint) {
    BS_RETURN_IF_ERROR(checkpoint->restore(*model_, *optimizer_));
    step_ = checkpoint->meta().step;
  }
  return Status::ok();
}

Result<StepResult> Trainer::step() {
  using tracer::EventKind;
  StepResult result;
  result.step = step_;
  result.startNs = tracer::hostNowNs();
  const int32_t m = options_.microBatches;
  const int64_t b = options_.batchSize, t = options_.model.seqLen;
  const int64_t fwdFlops = model_->forwardFlops(b, t);
  TraceContext trace{recorder_, static_cast<int32_t>(step_), -1, -1, -1};
  model_->zeroGrad();
  double lossSum = 0.0;
  for (int32_t mb = 0; mb < m; ++mb) {
    trace.microBatch = mb;
    {
      auto info = trace.span(EventKind::kDataLoad, "data_load");
      info.lane = tracer::Lane::kData;
      tracer::ScopedSpan span(recorder_, info);
      loader_->fill(step_, mb, batch_);
    }
    {
      tracer::ScopedSpan span(recorder_, trace.span(EventKind::kForward, "forward", fwdFlops));
      BS_ASSIGN_OR_RETURN(double loss,
                          model_->forward(*acts_, {batch_.tokens, {}, batch_.targets}, trace));
      lossSum += loss;
    }
    {
      tracer::ScopedSpan span(recorder_,
                              trace.span(EventKind::kBackward, "backward", 2 * fwdFlops));
      BS_RETURN_IF_ERROR(model_->backward(*acts_, {}, 1.0 / m, trace));
    }
  }
  trace.microBatch = -1;
  {
    tracer::ScopedSpan span(recorder_, trace.span(EventKind::kOptimizer, "optimizer"));
    const auto params = model_->parameters();
    BS_ASSIGN_OR_RETURN(result.gradNorm, clipGradNorm(params, options_.gradClip, *backend_));
    result.lr = options_.schedule.at(step_);
    optimizer_->step(result.lr, *backend_);
    BS_RETURN_IF_ERROR(backend_->synchronize());
  }
  result.loss = lossSum / m;
  if (!std::isfinite(result.loss)) {
    return Status::internal("loss became " + std::to_string(result.loss) + " at step " +
                            std::to_string(step_) + "; lower the learning rate");
  }
  result.tokens = tokensPerStep();
  ++step_;
  result.endNs = tracer::hostNowNs();
  return result;
}

Status Trainer::save(const std::string& path) {
  if (backend_->device() != Device::kHost) {
    return Status::unsupported("--save: checkpoints of a run on " + backend_->description() +
                               " are not supported yet");
  }
  CheckpointMeta meta;
  meta.model = options_.model;
  meta.step = step_;
  meta.trainerJson = options_.settingsJson();
  return writeCheckpoint(path, *model_, *optimizer_, meta);
}

}  // namespace bubblescope::engine
