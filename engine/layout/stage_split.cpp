#include "engine/layout/stage_split.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace bubblescope::layout {

LayerCosts layerCostsFor(const ModelConfig& m) {
  const double c = m.hidden, t = m.seqLen, v = m.vocabSize, r = m.mlpRatio;
  LayerCosts costs;
  costs.embedding = 2.0 * c;
  costs.layers.assign(m.numLayers, 2.0 * (4.0 + 2.0 * r) * c * c + 4.0 * t * c);
  costs.head = 2.0 * c * v;
  return costs;
}

Result<std::vector<int32_t>> splitByCost(const LayerCosts& costs, int32_t chunks) {
  const auto n = static_cast<int32_t>(costs.layers.size());
  if (chunks < 1) return Status::invalidArgument("a split needs at least one chunk");
  if (n < chunks) {
    return Status::invalidArgument("cannot split " + std::to_string(n) + " layers into " +
                                   std::to_string(chunks) + " chunks of at least one layer");
  }
  if (costs.embedding < 0 || costs.head < 0) {
    return Status::invalidArgument("layer costs must not be negative");
  }
  for (double c : costs.layers) {
    if (c < 0) return Status::invalidArgument("layer costs must not be negative");
  }
  // prefix[i] = cost of layers [0, i).
  std::vector<double> prefix(n + 1, 0.0);
  for (int32_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + costs.layers[i];
  auto chunkCost = [&](int32_t from, int32_t to, int32_t index) {  // layers [from, to)
    double c = prefix[to] - prefix[from];
    if (index == 0) c += costs.embedding;
    if (index == chunks - 1) c += costs.head;
    return c;
  };
  // best[j][i]: (max chunk cost, sum of squares) for layers [0, i) in j chunks.
  struct Cell {
    double worst = std::numeric_limits<double>::infinity();
    double squares = std::numeric_limits<double>::infinity();
    int32_t from = -1;
  };
  std::vector<std::vector<Cell>> best(chunks + 1, std::vector<Cell>(n + 1));
  best[0][0] = {0.0, 0.0, -1};
  // Costs are compared with a relative tolerance so that float rounding does
  // not break ties between equally balanced splits.
  auto less = [](double a, double b) {
    return std::isinf(b) ? a < b : a < b - 1e-12 * std::max(1.0, std::abs(b));
  };
  for (int32_t j = 1; j <= chunks; ++j) {
    for (int32_t i = j; i <= n - (chunks - j); ++i) {
      Cell& cell = best[j][i];
      for (int32_t from = j - 1; from < i; ++from) {
        const Cell& prev = best[j - 1][from];
        if (std::isinf(prev.worst)) continue;  // unreachable prefix
        const double c = chunkCost(from, i, j - 1);
        const double worst = std::max(prev.worst, c);
        const double squares = prev.squares + c * c;
        if (less(worst, cell.worst) || (!less(cell.worst, worst) && less(squares, cell.squares))) {
          cell = {worst, squares, from};
        }
      }
    }
  }
  std::vector<int32_t> split(chunks);
  for (int32_t j = chunks, i = n; j >= 1; --j) {
    const int32_t from = best[j][i].from;
    split[j - 1] = i - from;
    i = from;
  }
  return split;
}

Result<std::vector<int32_t>> stageSplit(const ModelConfig& model, int32_t stages, int32_t chunks,
                                        const std::vector<int32_t>& explicitSplit) {
  if (stages < 1 || chunks < 1) {
    return Status::invalidArgument("stage split needs stages >= 1 and chunks >= 1");
  }
  const int32_t n = stages * chunks;
  if (explicitSplit.empty()) return splitByCost(layerCostsFor(model), n);
  if (static_cast<int32_t>(explicitSplit.size()) != n) {
    return Status::invalidArgument("stage_layers has " + std::to_string(explicitSplit.size()) +
                                   " entries, expected pp x virtual_chunks = " + std::to_string(n));
  }
  int64_t sum = 0;
  for (int32_t layers : explicitSplit) {
    if (layers < 1) return Status::invalidArgument("stage_layers entries must be >= 1");
    sum += layers;
  }
  if (sum != model.numLayers) {
    return Status::invalidArgument("stage_layers sums to " + std::to_string(sum) +
                                   " but the model has " + std::to_string(model.numLayers) +
                                   " layers");
  }
  return explicitSplit;
}

std::vector<int32_t> firstLayers(const std::vector<int32_t>& split) {
  std::vector<int32_t> first(split.size(), 0);
  for (size_t i = 1; i < split.size(); ++i) first[i] = first[i - 1] + split[i - 1];
  return first;
}

}  // namespace bubblescope::layout
