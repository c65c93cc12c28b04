// Stage split: which contiguous layers each pipeline chunk holds.
//
// L decoder layers are split into p·v contiguous chunks, one per virtual stage
// (chunk c of stage k is virtual stage c·p + k, Megatron-LM order). The split
// minimises the most expensive chunk, with the embedding's cost added to the
// first virtual stage and the final layer norm, output projection and loss to
// the last (issue 5: "split by cost, not only count"). An explicit split from
// the layout overrides the cost split.
#pragma once

#include <cstdint>
#include <vector>

#include "common/result.h"
#include "engine/layout/model_config.h"

namespace bubblescope::layout {

struct LayerCosts {
  double embedding = 0;        // token + position embedding, on the first virtual stage
  std::vector<double> layers;  // one entry per decoder layer
  double head = 0;             // final layer norm, output projection and loss, on the last
};

// Forward FLOPs per token, as the cost of each part (llm.c / Megatron counting:
// a matmul of an (n, k) input with a (k, j) weight is 2·n·k·j FLOPs):
//   layer: 24·C² (QKV, projection, two MLP matmuls at mlp_ratio 4: 2·(3+1+2·r)·C²)
//          + 4·T·C (attention scores and weighted sum), layer norms ignored;
//   embedding: 2·C (two lookups and an add, nearly free);
//   head: 2·C·V (the output projection; the softmax is O(V)).
LayerCosts layerCostsFor(const ModelConfig& model);

// Layer counts per virtual stage, in virtual-stage order, minimising the
// largest chunk cost (exact, O(L²·n) dynamic programme); among equally good
// splits the one whose chunks are the most even (by sum of squared costs,
// greedily) is kept. Errors: chunks < 1, fewer layers than chunks, a
// negative cost.
Result<std::vector<int32_t>> splitByCost(const LayerCosts& costs, int32_t chunks);

// The split a run uses: `explicitSplit` when non-empty (it must have
// stages·chunks positive entries summing to the model's layers), otherwise
// splitByCost(layerCostsFor(model), stages·chunks).
Result<std::vector<int32_t>> stageSplit(const ModelConfig& model, int32_t stages, int32_t chunks,
                                        const std::vector<int32_t>& explicitSplit = {});

// The first layer of each virtual stage: prefix sums of a split.
std::vector<int32_t> firstLayers(const std::vector<int32_t>& split);

}  // namespace bubblescope::layout
