#include "engine/layout/model_config.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>

#include "engine/layout/strict_json.h"

#include "engine/layout/embedded_profiles.h"

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

// The presets that are data (resources/models/*.json: {"presets": [...]},
// each a model object whose "preset" names it), parsed once. A file that
// does not parse is a build-time mistake the tests catch
// (ClusterModels.EveryDataPresetParses); its presets are left out.
const std::vector<ModelConfig>& dataPresets() {
  static const std::vector<ModelConfig> kData = [] {
    std::vector<ModelConfig> out;
    for (const EmbeddedJson& f : embeddedModelPresets()) {
      const nlohmann::json j = nlohmann::json::parse(f.text, nullptr, false, true);
      if (!j.is_object() || !j.contains("presets") || !j["presets"].is_array()) continue;
      for (nlohmann::json p : j["presets"]) {
        if (!p.is_object() || !p.contains("preset") || !p["preset"].is_string()) continue;
        const std::string name = p["preset"].get<std::string>();
        p.erase("preset");
        auto config = modelConfigFromJson(p);
        if (!config.isOk()) continue;
        config->preset = name;
        out.push_back(*config);
      }
    }
    return out;
  }();
  return kData;
}

}  // namespace

int64_t ModelConfig::parameterCount() const {
  int64_t blocks = 0;
  for (int32_t i = 0; i < numLayers; ++i) blocks += blockParameterCount(i);
  return embeddingParameterCount() + blocks + headParameterCount();
}

int64_t ModelConfig::expertCapacity(int64_t tokens) const {
  if (experts <= 0) return 0;
  return static_cast<int64_t>(
      std::ceil(capacityFactor * static_cast<double>(tokens) * topK / experts));
}

int64_t ModelConfig::mlpParameterCount() const {
  const int64_t c = hidden, f = mlpHidden();
  return c * f + f + f * c + c;
}

int64_t ModelConfig::blockParameterCount(int32_t index) const {
  if (!isMoeBlock(index)) return blockParameterCount();
  return blockParameterCount() - mlpParameterCount() + int64_t{experts} * hidden /*router*/ +
         int64_t{experts} * mlpParameterCount();
}

int64_t ModelConfig::largestBlockParameterCount() const {
  int64_t most = 0;
  for (int32_t i = 0; i < numLayers; ++i) most = std::max(most, blockParameterCount(i));
  return most;
}

int64_t ModelConfig::activeParameterCount() const {
  const int64_t idle = int64_t{experts - topK} * mlpParameterCount();
  return parameterCount() - moeBlockCount() * idle;
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
  return 6.0 * static_cast<double>(activeParameterCount()) +
         6.0 * static_cast<double>(numLayers) * hidden * seqLen;
}

std::vector<std::string> modelPresetNames() {
  std::vector<std::string> names;
  for (const auto& p : kPresets) names.emplace_back(p.name);
  for (const ModelConfig& c : dataPresets()) names.push_back(c.preset);
  return names;
}

Result<ModelConfig> modelPreset(const std::string& name) {
  std::string known;
  for (const auto& p : kPresets) {
    if (name == p.name) return p.config;
    known += (known.empty() ? "" : ", ") + std::string(p.name);
  }
  for (const ModelConfig& c : dataPresets()) {
    if (name == c.preset) return c;
    known += ", " + c.preset;
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
  if (c.experts < 0) add("experts must not be negative, got " + std::to_string(c.experts));
  if (c.experts > 0) {
    if (c.topK != 1 && c.topK != 2) add("top_k must be 1 or 2, got " + std::to_string(c.topK));
    if (c.topK > c.experts) {
      add("top_k " + std::to_string(c.topK) + " exceeds the " + std::to_string(c.experts) +
          " experts");
    }
    if (!(c.capacityFactor > 0.0) || !std::isfinite(c.capacityFactor)) {
      add("capacity_factor must be a positive number, got " + std::to_string(c.capacityFactor));
    }
    if (c.moeEvery < 1 || (c.numLayers > 0 && c.moeEvery > c.numLayers)) {
      add("moe_every must be in [1, layers " + std::to_string(c.numLayers) + "], got " +
          std::to_string(c.moeEvery));
    }
    if (!(c.auxLossCoef >= 0.0) || !std::isfinite(c.auxLossCoef)) {
      add("aux_loss_coef must be a non-negative number, got " + std::to_string(c.auxLossCoef));
    }
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
    // "custom" (what toJson writes for a model that is no preset) names
    // none: the sizes that follow are the model.
    const auto name = j["preset"].get<std::string>();
    if (name != "custom") {
      BS_ASSIGN_OR_RETURN(c, modelPreset(name));
    }
  }
  static const std::pair<const char*, int32_t ModelConfig::*> kFields[] = {
      {"vocab_size", &ModelConfig::vocabSize}, {"seq_len", &ModelConfig::seqLen},
      {"layers", &ModelConfig::numLayers},     {"hidden", &ModelConfig::hidden},
      {"heads", &ModelConfig::numHeads},       {"mlp_ratio", &ModelConfig::mlpRatio},
      {"experts", &ModelConfig::experts},      {"top_k", &ModelConfig::topK},
      {"moe_every", &ModelConfig::moeEvery},
  };
  for (const auto& [key, member] : kFields) {
    if (!j.contains(key)) continue;
    // Sizes are at least 1; experts 0 is a dense model (validate() says more).
    const int32_t lo = std::string_view(key) == "experts" ? 0 : 1;
    BS_ASSIGN_OR_RETURN(const int32_t value,
                        jsonInteger<int32_t>(std::string("model.") + key, j[key], lo,
                                             std::numeric_limits<int32_t>::max()));
    if (c.*member != value) c.preset = "custom";
    c.*member = value;
  }
  static const std::pair<const char*, double ModelConfig::*> kNumbers[] = {
      {"capacity_factor", &ModelConfig::capacityFactor},
      {"aux_loss_coef", &ModelConfig::auxLossCoef},
  };
  for (const auto& [key, member] : kNumbers) {
    if (!j.contains(key)) continue;
    BS_ASSIGN_OR_RETURN(c.*member, jsonNumber(std::string("model.") + key, j[key]));
    c.preset = "custom";
  }
  BS_RETURN_IF_ERROR(validate(c));
  return c;
}

nlohmann::json toJson(const ModelConfig& c) {
  nlohmann::json j = {{"preset", c.preset},     {"vocab_size", c.vocabSize}, {"seq_len", c.seqLen},
                      {"layers", c.numLayers},  {"hidden", c.hidden},        {"heads", c.numHeads},
                      {"mlp_ratio", c.mlpRatio}};
  if (c.experts > 0) {
    j["experts"] = c.experts;
    j["top_k"] = c.topK;
    j["capacity_factor"] = c.capacityFactor;
    j["moe_every"] = c.moeEvery;
    j["aux_loss_coef"] = c.auxLossCoef;
  }
  return j;
}

}  // namespace bubblescope::layout
