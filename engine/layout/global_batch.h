// The global batch of a layout: sequences per step over all dp ranks.
#pragma once

#include <cstdint>

#include "engine/layout/layout.h"

namespace bubblescope::layout {

// micro-batch size x micro-batches x dp: what Layout::globalBatch, when set,
// must equal.
inline int64_t globalBatchSequences(const Layout& l) {
  return int64_t{l.microBatchSize} * l.microBatches * l.dp;
}

}  // namespace bubblescope::layout
