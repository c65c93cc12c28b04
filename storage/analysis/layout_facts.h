// LayoutFacts: what the analysis needs from a run's stored layout and model
// JSON, read defensively.
//
// Contract: parsing never fails. A key that is missing, of the wrong type or
// out of range is left unknown (std::nullopt), and every formula that needs
// it is then not shown. Keys (docs/layout-format.md): dp, tp, pp,
// zero_stage (or zero), schedule, virtual_chunks, micro_batches,
// micro_batch_size, model {vocab_size, seq_len, layers, hidden, mlp_ratio} or
// an explicit parameter count (model.parameters or top-level parameters).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engine/layout/zero_stage.h"

namespace bubblescope::analysis {

struct LayoutFacts {
  std::optional<int32_t> dp, tp, pp;
  std::optional<layout::ZeroStage> zeroStage;
  std::optional<std::string> schedule;    // gpipe | 1f1b | interleaved | zb-h1
  std::optional<int32_t> virtualChunks;   // v
  std::optional<int32_t> microBatches;    // m
  std::optional<int32_t> microBatchSize;  // b
  std::optional<int32_t> seqLen, hidden, layers;
  std::optional<int64_t> parameters;  // Ψ, the whole model's parameter count
  bool valid = false;                 // the layout text parsed as a JSON object
};

// `layoutJson` is runs.layout_json; `modelJson` (runs.model_json) fills in
// model sizes the layout lacks.
LayoutFacts layoutFactsFromJson(const std::string& layoutJson, const std::string& modelJson);

// Ψ of the GPT decoder the engine builds, from its sizes; the same count as
// engine/layout/model_config.cpp ModelConfig::parameterCount (storage may not
// link the engine, so the formula is repeated here and tested against it).
int64_t gptParameterCount(int64_t vocabSize, int64_t seqLen, int64_t layers, int64_t hidden,
                          int64_t mlpRatio);

}  // namespace bubblescope::analysis
