#include "engine/trainer_options.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/synthetic_corpus.h"
#include "engine/tokenizer.h"

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

}  // namespace bubblescope::engine
