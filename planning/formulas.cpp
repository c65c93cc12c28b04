#include "planning/formulas.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "planning/link_class.h"

namespace bubblescope::layout {
namespace {

// v of the layout's schedule: the model chunks each pipeline rank holds.
int32_t chunksPerRank(const Layout& l) {
  return l.schedule == ScheduleKind::kInterleaved ? l.virtualChunks : 1;
}

double ceilDiv(double a, int32_t b) {
  return std::ceil(a / b);
}

}  // namespace

double formulaBubble(ScheduleKind kind, int32_t p, int32_t m, int32_t v) {
  const double pm1 = p - 1;
  switch (kind) {
    case ScheduleKind::kGPipe:
    case ScheduleKind::kOneFOneB:
      return pm1 / (m + pm1);
    case ScheduleKind::kInterleaved:
      return pm1 / (static_cast<double>(v) * m + pm1);
    case ScheduleKind::kZeroBubbleH1:
      return pm1 / (3.0 * m + pm1);
  }
  return 0.0;
}

double formulaBubble(const Layout& l) {
  return l.pp == 1 ? 0.0 : formulaBubble(l.schedule, l.pp, l.microBatches, chunksPerRank(l));
}

std::string bubbleFormulaText(const Layout& l) {
  const int32_t p = l.pp, m = l.microBatches;
  if (p == 1) return "one stage: 0";
  const double value = formulaBubble(l);
  char text[128];
  switch (l.schedule) {
    case ScheduleKind::kInterleaved:
      std::snprintf(text, sizeof text, "(p-1)/(v*m+p-1) = %d/%d = %.3f", p - 1,
                    l.virtualChunks * m + p - 1, value);
      break;
    case ScheduleKind::kZeroBubbleH1:
      std::snprintf(text, sizeof text, "(p-1)/(3m+p-1) = %d/%d = %.3f", p - 1, 3 * m + p - 1,
                    value);
      break;
    default:
      std::snprintf(text, sizeof text, "(p-1)/(m+p-1) = %d/%d = %.3f", p - 1, m + p - 1, value);
  }
  return text;
}

double parametersPerRank(const Layout& l) {
  return static_cast<double>(l.model.parameterCount()) / (int64_t{l.tp} * l.pp);
}

int64_t largestSlotParameters(const ModelConfig& model) {
  return std::max({model.embeddingParameterCount(), model.largestBlockParameterCount(),
                   model.headParameterCount()});
}

ModelStateBytes zeroModelStateBytes(const Layout& l, double psi) {
  return zeroModelStateBytes(l, psi, kBytesPerElement, kBytesPerElement, 2 * kBytesPerElement);
}

ModelStateBytes zeroModelStateBytes(const Layout& l, double psi, double parameterBytes,
                                    double gradientBytes, double optimizerBytes) {
  const ZeroStage stage = l.zeroStage;
  const int32_t n = l.dp;
  const double slot = static_cast<double>(largestSlotParameters(l.model));
  ModelStateBytes b;
  b.parameters = parameterBytes * psi / (shardsParameters(stage) ? n : 1);
  b.gradients = gradientBytes * psi / (shardsGradients(stage) ? n : 1);
  b.optimizer = optimizerBytes * psi / (shardsOptimizer(stage) ? n : 1);
  if (shardsParameters(stage)) b.transientParameters = parameterBytes * slot;
  if (shardsGradients(stage)) {
    // A bucket holds at most the gradients there are (planBuckets).
    const double bucket = std::min(static_cast<double>(l.bucketElementCount(sizeof(float))), psi);
    const double f = kZeroBucketsInFlight;
    const double piece = std::min(bucket, ceilDiv(psi, n));  // bucket ∩ shard
    b.transientGradients = gradientBytes * (l.overlap ? slot + (f + 2) * bucket + (f + 1) * piece
                                                         : slot + psi + ceilDiv(psi, n));
  } else if (shardsOptimizer(stage)) {
    b.transientGradients = gradientBytes * ceilDiv(psi, n);
  }
  return b;
}

double dataParallelVolumeBytes(const Layout& l, double psi, int32_t rank) {
  if (l.dp == 1) return 0.0;
  const double m = l.microBatches;
  double elements = 2.0 * psi;  // stages 0 and 1
  if (l.allReduce == AllReduceAlgorithm::kHierarchical && l.zeroStage == ZeroStage::kNone) {
    const int32_t perNode = l.ranksPerNode > 0 ? l.ranksPerNode / (l.tp * l.pp)
                                               : groupRanksOnHost(l, placedHosts(l), rank, "dp");
    elements = 2.0 * psi + 2.0 * psi / std::max(perNode, 1);
  }
  if (shardsGradients(l.zeroStage)) elements = m * psi + psi;
  // Recompute (pipeline layouts only) runs each forward again: one more gather.
  const double recomputes = l.recompute && l.pp > 1 ? 1.0 : 0.0;
  if (shardsParameters(l.zeroStage)) elements = (3.0 + recomputes) * m * psi;
  // The step's loss, and at stages >= 1 each chunk's squared gradient norm:
  // all-reduces of one double.
  const double scalars = 1.0 + (shardsOptimizer(l.zeroStage) ? chunksPerRank(l) : 0);
  return elements * kBytesPerElement + 2.0 * kBytesPerScalar * scalars;
}

double tensorParallelVolumeBytes(const Layout& l) {
  if (l.tp == 1) return 0.0;
  const double bsh = static_cast<double>(l.microBatchSize) * l.model.seqLen * l.model.hidden;
  const double layersPerRank = static_cast<double>(l.model.numLayers) / l.pp;
  return 8.0 * bsh * layersPerRank * l.microBatches * kBytesPerElement;
}

double pipelineVolumeBytes(const Layout& l, int32_t stage) {
  const int32_t p = l.pp;
  if (p == 1) return 0.0;
  const int32_t v = chunksPerRank(l);
  // Model chunk c of this stage is global chunk c·p + stage of p·v.
  int64_t boundaryEnds = 0;
  for (int32_t c = 0; c < v; ++c) {
    const int32_t index = c * p + stage;
    boundaryEnds += (index > 0) + (index < p * v - 1);
  }
  const double bsh = static_cast<double>(l.microBatchSize) * l.model.seqLen * l.model.hidden;
  return 2.0 * boundaryEnds * bsh * l.microBatches * kBytesPerElement;
}

}  // namespace bubblescope::layout
