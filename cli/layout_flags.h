// The layout flags `run` and `simulate` share: a layout file and flags that
// set its keys (docs/layout-format.md), in one place so both commands accept
// the same layouts the same way.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "common/result.h"
#include "engine/layout/model_config.h"

namespace bubblescope::cli {

// The mixture-of-experts flags `run` and `train` share (model keys experts,
// top_k, capacity_factor, moe_every, aux_loss_coef; docs/engine.md).
struct MoeFlags {
  std::optional<int32_t> experts, topK, moeEvery;
  std::optional<double> capacityFactor, auxLossCoef;
  bool any() const { return experts || topK || moeEvery || capacityFactor || auxLossCoef; }
  // Sets the keys given on a model JSON object.
  void applyTo(nlohmann::json& model) const;
  // `model` with the keys given; errors name the key a value breaks.
  Result<layout::ModelConfig> appliedTo(const layout::ModelConfig& model) const;
};
// Registers --experts, --top-k, --capacity-factor, --moe-every, --aux-loss-coef.
void addMoeFlags(Command cmd, MoeFlags& flags);

// Flags that set layout keys; unset ones leave the file's (or default) value.
struct LayoutFlags {
  std::string layoutFile;
  std::optional<int32_t> dp, tp, pp, ep, zero, chunks, microBatches, microBatchSize, steps,
      ranksPerNode;
  MoeFlags moe;
  std::optional<int64_t> globalBatch, bucketElements, seed;
  std::optional<double> bucketMb, lr, interNodeGbps, interNodeLatencyUs;
  std::optional<std::string> model, schedule, hostfile, data, backend, gradCompression, allReduce;
  std::optional<std::string> precision;
  std::vector<std::string> hosts;
  bool noOverlap = false;
  bool recompute = false;
};

// Registers --layout and every layout-key flag on `cmd`; `flags` must outlive
// the parse.
void addLayoutFlags(Command cmd, LayoutFlags& flags);

// The layout's JSON: the file's, then the flags on top. Errors: the file
// cannot be read or is not a JSON object (the message names the problem).
Result<nlohmann::json> layoutJson(const LayoutFlags& flags);

}  // namespace bubblescope::cli
