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
  // Mixture of experts (docs/engine.md, "Mixture of experts"): with E > 0,
  // every moeEvery-th block (indices moeEvery-1, 2·moeEvery-1, ...) replaces
  // its MLP by E expert MLPs of the same shape behind a softmax router
  // (E, C); each token goes to its topK best experts, at most
  // expertCapacity(N) tokens per expert. 0 experts: the dense model.
  int32_t experts = 0;          // E
  int32_t topK = 1;             // 1 (Switch) or 2 (GShard)
  double capacityFactor = 1.0;  // capacity = ceil(factor · N · topK / E)
  int32_t moeEvery = 1;         // every k-th block is MoE, the others dense
  double auxLossCoef = 0.01;    // α of the load-balancing loss α · aux

  int32_t headSize() const { return hidden / numHeads; }
  int32_t mlpHidden() const { return mlpRatio * hidden; }
  bool hasMoe() const { return experts > 0; }
  // Whether block `index` (0-based) is an MoE block.
  bool isMoeBlock(int32_t index) const {
    return experts > 0 && moeEvery > 0 && index % moeEvery == moeEvery - 1;
  }
  int32_t moeBlockCount() const { return experts > 0 && moeEvery > 0 ? numLayers / moeEvery : 0; }
  // Tokens one expert takes from a batch of `tokens`:
  // ceil(capacityFactor · tokens · topK / E) (Switch Transformer, GShard).
  int64_t expertCapacity(int64_t tokens) const;

  // Parameter count N (weights of the output projection are tied to nothing:
  // the decoder has its own output matrix, as the engine builds it): the
  // embedding slot, L blocks and the head slot (the engine's layer slots).
  int64_t parameterCount() const;
  int64_t embeddingParameterCount() const;  // wte V·C + wpe T·C
  int64_t blockParameterCount() const;      // one dense transformer block
  // Block `index`: dense, or the MoE block's attention + router E·C + E
  // expert MLPs (2·C·F + F + C each).
  int64_t blockParameterCount(int32_t index) const;
  int64_t largestBlockParameterCount() const;  // the MoE block's when there is one
  // One MLP (fc and its projection, with biases): 2·C·F + F + C; one expert.
  int64_t mlpParameterCount() const;
  // Parameters one token passes through: an MoE block counts its router and
  // topK experts (the basis of the FLOPs below; N for a dense model).
  int64_t activeParameterCount() const;
  int64_t headParameterCount() const;  // final layer norm 2C + output C·V
  // Training FLOPs per token: 6·N + 6·L·C·T (llm.c; docs/formulas.md), N the
  // active parameters.
  double trainingFlopsPerToken() const;

  bool operator==(const ModelConfig&) const = default;
};

// Names of the presets, in order of size: the engine's (tiny, small,
// gpt2-124m), then the data presets of resources/models (the Megatron-LM
// SC21 Table 1 models megatron-1.7b ... megatron-1t, gpt3-175b;
// docs/hardware.md), which the cluster planner predicts.
std::vector<std::string> modelPresetNames();
// A preset by name; an unknown name is an error that lists the known ones.
Result<ModelConfig> modelPreset(const std::string& name);
// Every problem of a config in one message ("hidden 30 is not divisible by
// heads 4; seq_len must be positive, got 0").
Status validate(const ModelConfig& config);

// JSON: {"preset": "tiny"} or the full sizes; sizes override a preset's.
// MoE keys (written only when experts > 0): experts, top_k,
// capacity_factor, moe_every, aux_loss_coef.
Result<ModelConfig> modelConfigFromJson(const nlohmann::json& j);
nlohmann::json toJson(const ModelConfig& config);

}  // namespace bubblescope::layout
