#include "storage/analysis/layout_facts.h"

#include <limits>
#include <nlohmann/json.hpp>

namespace bubblescope::analysis {
namespace {

using nlohmann::json;

json parseObject(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  return j.is_object() ? j : json();
}

// A positive (or, with allowZero, non-negative) integer that fits int32.
std::optional<int32_t> intAt(const json& j, const char* key, bool allowZero = false) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number_integer()) return std::nullopt;
  const int64_t v = j[key].get<int64_t>();
  if (v < (allowZero ? 0 : 1) || v > std::numeric_limits<int32_t>::max()) return std::nullopt;
  return static_cast<int32_t>(v);
}

std::optional<int64_t> int64At(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number_integer()) return std::nullopt;
  const int64_t v = j[key].get<int64_t>();
  return v > 0 ? std::optional<int64_t>(v) : std::nullopt;
}

}  // namespace

int64_t gptParameterCount(int64_t vocabSize, int64_t seqLen, int64_t layers, int64_t hidden,
                          int64_t mlpRatio) {
  const int64_t c = hidden, f = mlpRatio * hidden;
  const int64_t perLayer = 2 * c + c * 3 * c + 3 * c + c * c + c + 2 * c + c * f + f + f * c + c;
  return vocabSize * c + seqLen * c + layers * perLayer + 2 * c + c * vocabSize;
}

LayoutFacts layoutFactsFromJson(const std::string& layoutJson, const std::string& modelJson) {
  LayoutFacts f;
  const json layout = parseObject(layoutJson);
  f.valid = layout.is_object();
  f.dp = intAt(layout, "dp");
  f.tp = intAt(layout, "tp");
  f.pp = intAt(layout, "pp");
  auto zero = intAt(layout, "zero_stage", /*allowZero=*/true);
  if (!zero) zero = intAt(layout, "zero", /*allowZero=*/true);
  if (zero) {
    if (auto stage = layout::zeroStageFromNumber(*zero); stage.isOk()) f.zeroStage = stage.value();
  }
  if (layout.is_object() && layout.contains("schedule") && layout["schedule"].is_string()) {
    const std::string s = layout["schedule"].get<std::string>();
    if (s == "gpipe" || s == "1f1b" || s == "interleaved" || s == "zb-h1") f.schedule = s;
  }
  f.virtualChunks = intAt(layout, "virtual_chunks");
  f.microBatches = intAt(layout, "micro_batches");
  f.microBatchSize = intAt(layout, "micro_batch_size");

  json model = layout.is_object() && layout.contains("model") ? layout["model"] : json();
  if (!model.is_object()) model = parseObject(modelJson);
  f.seqLen = intAt(model, "seq_len");
  f.hidden = intAt(model, "hidden");
  f.layers = intAt(model, "layers");
  f.parameters = int64At(model, "parameters");
  if (!f.parameters) f.parameters = int64At(layout, "parameters");
  if (!f.parameters) {
    const auto vocab = intAt(model, "vocab_size");
    const auto ratio = model.contains("mlp_ratio") ? intAt(model, "mlp_ratio") : 4;
    if (vocab && f.seqLen && f.layers && f.hidden && ratio) {
      f.parameters = gptParameterCount(*vocab, *f.seqLen, *f.layers, *f.hidden, *ratio);
    }
  }
  return f;
}

}  // namespace bubblescope::analysis
