#include "planning/expert_parallel_cost.h"

#include <algorithm>

#include "planning/formulas.h"

namespace bubblescope::layout {
namespace {

// One data all-to-all of a block: the kept rows of C fp32, k·b·T or, when
// the capacity is smaller, E·capacity.
double epRowsBytes(const Layout& l) {
  const ModelConfig& m = l.model;
  const int64_t tokens = int64_t{l.microBatchSize} * m.seqLen;
  const double rows =
      std::min(static_cast<double>(m.topK) * static_cast<double>(tokens),
               static_cast<double>(m.experts) * static_cast<double>(m.expertCapacity(tokens)));
  return kBytesPerElement * rows * m.hidden;
}

}  // namespace

ChunkParameters chunkParameters(const Layout& l, int32_t firstLayer, int32_t layers, bool embedding,
                                bool head) {
  const ModelConfig& m = l.model;
  ChunkParameters p;
  double experts = 0;
  for (int32_t i = firstLayer; i < firstLayer + layers; ++i) {
    p.shared += static_cast<double>(m.blockParameterCount(i));
    if (m.isMoeBlock(i)) {
      ++p.moeBlocks;
      const double e = static_cast<double>(m.experts) * static_cast<double>(m.mlpParameterCount());
      p.shared -= e;
      experts += e;
    }
  }
  if (embedding) p.shared += static_cast<double>(m.embeddingParameterCount());
  if (head) p.shared += static_cast<double>(m.headParameterCount());
  p.shared /= l.tp;
  p.experts = experts / (l.ep * l.tp);
  return p;
}

EpAllToAlls epForwardAllToAlls(const Layout& l) {
  if (l.ep <= 1) return {};
  return {kEpForwardAllToAlls, 2 * epRowsBytes(l) + kBytesPerElement * l.model.experts};
}

EpAllToAlls epBackwardAllToAlls(const Layout& l) {
  if (l.ep <= 1) return {};
  return {kEpBackwardAllToAlls, 2 * epRowsBytes(l)};
}

int32_t expertDataParallelSize(const Layout& l) {
  return l.ep > 0 ? l.dp / l.ep : l.dp;
}

}  // namespace bubblescope::layout
