#include "engine/checkpoint.h"

#include <charconv>
#include <deque>
#include <nlohmann/json.hpp>

namespace bubblescope::engine {
namespace {

bool sameShape(const layout::ModelConfig& a, const layout::ModelConfig& b) {
  return a.vocabSize == b.vocabSize && a.seqLen == b.seqLen && a.numLayers == b.numLayers &&
         a.hidden == b.hidden && a.numHeads == b.numHeads && a.mlpRatio == b.mlpRatio;
}

bool parseInt(const std::string& s, int64_t& out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

// The host values of `t`: its own span, or, for a device tensor, a copy
// downloaded into `staged` (which keeps it alive).
Result<std::span<const float>> hostValues(const Tensor& t, Backend* backend,
                                          std::deque<std::vector<float>>& staged) {
  if (t.device() == Device::kHost) return std::span<const float>(t.span());
  if (backend == nullptr) return Status::internal("a device tensor without its backend");
  BS_ASSIGN_OR_RETURN(std::vector<float> host, backend->download(t));
  return std::span<const float>(staged.emplace_back(std::move(host)));
}

// Copies the file's `name` into `t`, through the host for a device tensor.
Status restoreInto(const SafetensorsFile& file, const std::string& name, Tensor& t,
                   Backend* backend) {
  if (t.device() == Device::kHost) return file.copyTo(name, t.shape(), t.span());
  if (backend == nullptr) return Status::internal("a device tensor without its backend");
  std::vector<float> host(static_cast<size_t>(t.numel()));
  BS_RETURN_IF_ERROR(file.copyTo(name, t.shape(), host));
  backend->upload<float>(t, host);  // copied when it returns: `host` may go
  return Status::ok();
}

}  // namespace

std::string describeShape(const layout::ModelConfig& c) {
  return "vocab " + std::to_string(c.vocabSize) + ", seq_len " + std::to_string(c.seqLen) +
         ", layers " + std::to_string(c.numLayers) + ", hidden " + std::to_string(c.hidden) +
         ", heads " + std::to_string(c.numHeads) + ", mlp_ratio " + std::to_string(c.mlpRatio);
}

Status writeCheckpoint(const std::string& path, GptModel& model, AdamW& optimizer,
                       const CheckpointMeta& meta) {
  std::vector<SafetensorsTensorView> views;
  std::deque<std::vector<float>> staged;  // device tensors' host copies
  Backend* backend = model.backend();
  auto add = [&](std::string name, const Tensor& t) -> Status {
    BS_ASSIGN_OR_RETURN(const std::span<const float> values, hostValues(t, backend, staged));
    views.push_back({std::move(name), t.shape(), values});
    return Status::ok();
  };
  for (Parameter* p : model.parameters()) BS_RETURN_IF_ERROR(add(p->name, p->value));
  for (AdamW::State& s : optimizer.states()) {
    BS_RETURN_IF_ERROR(add("optimizer.m." + s.param->name, s.m));
    BS_RETURN_IF_ERROR(add("optimizer.v." + s.param->name, s.v));
  }
  const std::map<std::string, std::string> metadata = {
      {"format", kCheckpointFormat},
      {"model", layout::toJson(meta.model).dump()},
      {"step", std::to_string(meta.step)},
      {"optimizer_step", std::to_string(optimizer.stepCount())},
      {"trainer", meta.trainerJson},
  };
  return writeSafetensors(path, views, metadata).withContext("saving checkpoint '" + path + "'");
}

Result<Checkpoint> Checkpoint::read(const std::string& path) {
  BS_ASSIGN_OR_RETURN(SafetensorsFile file, SafetensorsFile::read(path));
  const auto& md = file.metadata();
  auto field = [&](const char* key) -> const std::string* {
    auto it = md.find(key);
    return it == md.end() ? nullptr : &it->second;
  };
  const std::string* format = field("format");
  if (format == nullptr || *format != kCheckpointFormat) {
    return Status::unsupported("'" + path + "' is a safetensors file but not a " +
                               kCheckpointFormat + " checkpoint");
  }
  CheckpointMeta meta;
  const std::string* model = field("model");
  const std::string* step = field("step");
  if (model == nullptr || step == nullptr || !parseInt(*step, meta.step) || meta.step < 0) {
    return Status::corrupt("checkpoint '" + path + "' lacks a valid model or step entry");
  }
  auto modelJson = nlohmann::json::parse(*model, nullptr, /*allow_exceptions=*/false);
  auto config = layout::modelConfigFromJson(modelJson);
  if (!config.isOk()) return config.status().withContext("checkpoint '" + path + "' model");
  meta.model = *config;
  if (const std::string* trainer = field("trainer")) meta.trainerJson = *trainer;
  return Checkpoint(std::move(file), std::move(meta));
}

Status Checkpoint::checkModel(const layout::ModelConfig& model) const {
  if (sameShape(model, meta_.model)) return Status::ok();
  return Status::invalidArgument("checkpoint '" + path() + "' holds a model of another shape (" +
                                 describeShape(meta_.model) + ") than this run's (" +
                                 describeShape(model) + ")");
}

Status Checkpoint::restore(GptModel& model, AdamW& optimizer) const {
  BS_RETURN_IF_ERROR(checkModel(model.config()));
  Backend* backend = model.backend();
  for (Parameter* p : model.parameters()) {
    BS_RETURN_IF_ERROR(restoreInto(file_, p->name, p->value, backend));
  }
  for (AdamW::State& s : optimizer.states()) {
    BS_RETURN_IF_ERROR(restoreInto(file_, "optimizer.m." + s.param->name, s.m, backend));
    BS_RETURN_IF_ERROR(restoreInto(file_, "optimizer.v." + s.param->name, s.v, backend));
  }
  if (backend != nullptr) BS_RETURN_IF_ERROR(backend->synchronize());
  int64_t optimizerStep = meta_.step;
  auto it = file_.metadata().find("optimizer_step");
  if (it != file_.metadata().end() && !parseInt(it->second, optimizerStep)) {
    return Status::corrupt("checkpoint '" + path() + "' has a bad optimizer_step");
  }
  optimizer.setStepCount(optimizerStep);
  return Status::ok();
}

}  // namespace bubblescope::engine
