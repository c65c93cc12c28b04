#include "storage/analysis/formulas.h"

#include <cstdio>

namespace bubblescope::analysis {

std::optional<double> bubbleFormula(const std::string& schedule, int32_t p, int32_t m, int32_t v) {
  if (p < 1 || m < 1 || v < 1) return std::nullopt;
  const double pm1 = p - 1;
  if (schedule == "gpipe" || schedule == "1f1b") return pm1 / (m + pm1);
  if (schedule == "interleaved") return pm1 / (static_cast<double>(v) * m + pm1);
  if (schedule == "zb-h1") return pm1 / (3.0 * m + pm1);
  return std::nullopt;
}

std::optional<double> bubbleFormula(const LayoutFacts& layout) {
  if (!layout.valid) return std::nullopt;
  const int32_t p = layout.pp.value_or(1);
  if (p == 1) return 0.0;
  if (!layout.schedule || !layout.microBatches) return std::nullopt;
  const int32_t v = *layout.schedule == "interleaved" ? layout.virtualChunks.value_or(0) : 1;
  return bubbleFormula(*layout.schedule, p, *layout.microBatches, v);
}

std::string bubbleFormulaText(const LayoutFacts& layout) {
  const auto value = bubbleFormula(layout);
  if (!value) return "";
  const int32_t p = layout.pp.value_or(1);
  if (p == 1) return "one stage: 0";
  const int32_t m = *layout.microBatches;
  char text[128];
  if (*layout.schedule == "interleaved") {
    const int32_t v = *layout.virtualChunks;
    std::snprintf(text, sizeof text, "(p-1)/(v*m+p-1) = %d/%d = %.3f", p - 1, v * m + p - 1,
                  *value);
  } else if (*layout.schedule == "zb-h1") {
    std::snprintf(text, sizeof text, "(p-1)/(3m+p-1) = %d/%d = %.3f", p - 1, 3 * m + p - 1, *value);
  } else {
    std::snprintf(text, sizeof text, "(p-1)/(m+p-1) = %d/%d = %.3f", p - 1, m + p - 1, *value);
  }
  return text;
}

std::optional<ModelStateBytes> zeroModelStateBytes(int64_t psiRank, layout::ZeroStage zeroStage,
                                                   int32_t dp) {
  if (psiRank <= 0 || dp < 1) return std::nullopt;
  const double psi = static_cast<double>(psiRank);
  ModelStateBytes b;
  b.parameters = 4.0 * psi / (layout::shardsParameters(zeroStage) ? dp : 1);
  b.gradients = 4.0 * psi / (layout::shardsGradients(zeroStage) ? dp : 1);
  b.optimizer = 8.0 * psi / (layout::shardsOptimizer(zeroStage) ? dp : 1);
  return b;
}

std::optional<double> parametersPerRank(const LayoutFacts& layout) {
  if (!layout.parameters) return std::nullopt;
  return static_cast<double>(*layout.parameters) / (layout.tp.value_or(1) * layout.pp.value_or(1));
}

std::optional<double> parametersOfRank(const LayoutFacts& layout, int64_t storedParameters) {
  if (storedParameters > 0) return static_cast<double>(storedParameters);
  return parametersPerRank(layout);
}

std::optional<double> dataParallelVolumeBytes(const LayoutFacts& layout) {
  return dataParallelVolumeBytes(layout, parametersPerRank(layout));
}

std::optional<double> dataParallelVolumeBytes(const LayoutFacts& layout,
                                              std::optional<double> psi) {
  if (!psi || !layout.zeroStage) return std::nullopt;
  if (layout.dp.value_or(1) == 1) return 0.0;
  const double elements = (layout::shardsParameters(*layout.zeroStage) ? 3.0 : 2.0) * *psi;
  return elements * kBytesPerElement;
}

std::optional<double> tensorParallelVolumeBytes(const LayoutFacts& layout) {
  if (layout.tp.value_or(1) == 1) return 0.0;
  if (!layout.microBatchSize || !layout.seqLen || !layout.hidden || !layout.layers ||
      !layout.microBatches) {
    return std::nullopt;
  }
  const double bsh = static_cast<double>(*layout.microBatchSize) * *layout.seqLen * *layout.hidden;
  const double layersPerRank = static_cast<double>(*layout.layers) / layout.pp.value_or(1);
  return 8.0 * bsh * layersPerRank * *layout.microBatches * kBytesPerElement;
}

std::optional<double> pipelineVolumeBytes(const LayoutFacts& layout, int32_t stage) {
  const int32_t p = layout.pp.value_or(1);
  if (p == 1) return 0.0;
  if (!layout.microBatchSize || !layout.seqLen || !layout.hidden || !layout.microBatches ||
      stage < 0 || stage >= p) {
    return std::nullopt;
  }
  const bool interleaved = layout.schedule && *layout.schedule == "interleaved";
  const int32_t v = interleaved ? layout.virtualChunks.value_or(0) : 1;
  if (v < 1) return std::nullopt;
  // Model chunk c of this stage is global chunk c·p + stage of p·v.
  int64_t boundaryEnds = 0;
  for (int32_t c = 0; c < v; ++c) {
    const int32_t index = c * p + stage;
    boundaryEnds += (index > 0) + (index < p * v - 1);
  }
  const double bsh = static_cast<double>(*layout.microBatchSize) * *layout.seqLen * *layout.hidden;
  return 2.0 * boundaryEnds * bsh * *layout.microBatches * kBytesPerElement;
}

}  // namespace bubblescope::analysis
