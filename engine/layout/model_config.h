// ModelConfig: the shape of the GPT-style decoder, and its named presets.
//
// Pure value type (standard library + JSON only). Sizes are counts, not bytes.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "common/result.h"

namespace bubblescope::layout {

struct ModelConfig {
  std::string preset;     // "tiny", "small", "gpt2-124m", or "custom"
  int32_t vocabSize = 0;  // V
  int32_t seqLen = 0;     // T, maximum sequence length
  int32_t numLayers = 0;  // L
  int32_t hidden = 0;     // C
  int32_t numHeads = 0;   // NH; head size C / NH
  int32_t mlpRatio = 4;   // MLP width = mlpRatio * C

  int32_t headSize() const { return hidden / numHeads; }
  int32_t mlpHidden() const { return mlpRatio * hidden; }

  // Parameter count N (weights of the output projection are tied to nothing:
  // the decoder has its own output matrix, as the engine builds it): the
  // embedding slot, L blocks and the head slot (the engine's layer slots).
  int64_t parameterCount() const;
  int64_t embeddingParameterCount() const;  // wte V·C + wpe T·C
  int64_t blockParameterCount() const;      // one transformer block
  int64_t headParameterCount() const;       // final layer norm 2C + output C·V
  // Training FLOPs per token: 6·N + 6·L·C·T (REFERENCE.md, llm.c).
  double trainingFlopsPerToken() const;

  bool operator==(const ModelConfig&) const = default;
};

// Names of the presets, in order of size.
std::vector<std::string> modelPresetNames();
// A preset by name; an unknown name is an error that lists the known ones.
Result<ModelConfig> modelPreset(const std::string& name);
// Every problem of a config in one message ("hidden 30 is not divisible by
// heads 4; seq_len must be positive, got 0").
Status validate(const ModelConfig& config);

// JSON: {"preset": "tiny"} or the full sizes; sizes override a preset's.
Result<ModelConfig> modelConfigFromJson(const nlohmann::json& j);
nlohmann::json toJson(const ModelConfig& config);

}  // namespace bubblescope::layout
