#include "engine/layout/model_config.h"

#include <nlohmann/json.hpp>

namespace bubblescope::layout {
namespace {

struct PresetEntry {
  const char* name;
  ModelConfig config;
};

// vocab 256: the byte-level tokenizer. gpt2-124m keeps GPT-2 small's shape
// (50257 vocabulary, 1024 positions, 12 layers, 768 wide, 12 heads).
const PresetEntry kPresets[] = {
    {"tiny", {"tiny", 256, 32, 2, 32, 4, 4}},
    {"small", {"small", 256, 128, 4, 256, 8, 4}},
    {"gpt2-124m", {"gpt2-124m", 50257, 1024, 12, 768, 12, 4}},
};

}  // namespace

int64_t ModelConfig::parameterCount() const {
  return embeddingParameterCount() + numLayers * blockParameterCount() + headParameterCount();
}

int64_t ModelConfig::embeddingParameterCount() const {
  return int64_t{vocabSize} * hidden /*wte*/ + int64_t{seqLen} * hidden /*wpe*/;
}

int64_t ModelConfig::blockParameterCount() const {
  const int64_t c = hidden, f = mlpHidden();
  return 2 * c /*ln1*/ + c * 3 * c + 3 * c /*qkv*/ + c * c + c /*proj*/ + 2 * c /*ln2*/ + c * f +
         f /*fc*/ + f * c + c /*fc proj*/;
}

int64_t ModelConfig::headParameterCount() const {
  return 2 * int64_t{hidden} /*lnf*/ + int64_t{hidden} * vocabSize /*lm head*/;
}

double ModelConfig::trainingFlopsPerToken() const {
  return 6.0 * static_cast<double>(parameterCount()) +
         6.0 * static_cast<double>(numLayers) * hidden * seqLen;
}

std::vector<std::string> modelPresetNames() {
  std::vector<std::string> names;
  for (const auto& p : kPresets) names.emplace_back(p.name);
  return names;
}

Result<ModelConfig> modelPreset(const std::string& name) {
  std::string known;
  for (const auto& p : kPresets) {
    if (name == p.name) return p.config;
    known += (known.empty() ? "" : ", ") + std::string(p.name);
  }
  return Status::invalidArgument("unknown model preset '" + name + "' (known: " + known + ")");
}

Status validate(const ModelConfig& c) {
  std::string problems;
  auto add = [&](const std::string& p) { problems += (problems.empty() ? "" : "; ") + p; };
  auto positive = [&](const char* field, int64_t v) {
    if (v <= 0) add(std::string(field) + " must be positive, got " + std::to_string(v));
  };
  positive("vocab_size", c.vocabSize);
  positive("seq_len", c.seqLen);
  positive("layers", c.numLayers);
  positive("hidden", c.hidden);
  positive("heads", c.numHeads);
  positive("mlp_ratio", c.mlpRatio);
  if (c.hidden > 0 && c.numHeads > 0 && c.hidden % c.numHeads != 0) {
    add("hidden " + std::to_string(c.hidden) + " is not divisible by heads " +
        std::to_string(c.numHeads));
  }
  if (problems.empty()) return Status::ok();
  return Status::invalidArgument("invalid model: " + problems);
}

Result<ModelConfig> modelConfigFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return Status::invalidArgument("model must be a JSON object");
  ModelConfig c;
  c.preset = "custom";
  if (j.contains("preset")) {
    if (!j["preset"].is_string()) return Status::invalidArgument("model.preset must be a string");
    BS_ASSIGN_OR_RETURN(c, modelPreset(j["preset"].get<std::string>()));
  }
  static const std::pair<const char*, int32_t ModelConfig::*> kFields[] = {
      {"vocab_size", &ModelConfig::vocabSize}, {"seq_len", &ModelConfig::seqLen},
      {"layers", &ModelConfig::numLayers},     {"hidden", &ModelConfig::hidden},
      {"heads", &ModelConfig::numHeads},       {"mlp_ratio", &ModelConfig::mlpRatio},
  };
  for (const auto& [key, member] : kFields) {
    if (!j.contains(key)) continue;
    if (!j[key].is_number_integer()) {
      return Status::invalidArgument(std::string("model.") + key + " must be an integer");
    }
    const auto value = j[key].get<int32_t>();
    if (c.*member != value) c.preset = "custom";
    c.*member = value;
  }
  BS_RETURN_IF_ERROR(validate(c));
  return c;
}

nlohmann::json toJson(const ModelConfig& c) {
  return {{"preset", c.preset},     {"vocab_size", c.vocabSize}, {"seq_len", c.seqLen},
          {"layers", c.numLayers},  {"hidden", c.hidden},        {"heads", c.numHeads},
          {"mlp_ratio", c.mlpRatio}};
}

}  // namespace bubblescope::layout
