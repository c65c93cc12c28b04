#include "planning/activation_bytes.h"

#include <algorithm>

namespace bubblescope::layout {

double activationBytesPerMicroBatch(const Layout& l, int32_t layers, bool embedding, bool head,
                                    const RunFormat& format) {
  const double b = l.microBatchSize, t = l.model.seqLen, c = l.model.hidden;
  const double f = l.model.mlpHidden(), tp = l.tp;
  const double input = b * t * c;
  const double bytes = format.activationBytes;
  if (l.recompute && format.recomputeEachLayer) {
    // Every layer's input is kept; the head is not recomputed.
    double elements = layers * input;
    if (head) elements += b * t * (c + l.model.vocabSize / tp + 3);
    return bytes * elements;
  }
  if (l.recompute) return bytes * input;
  const double block =
      b * t * (5 * c + 4 + (3 * c + c + 2 * f) / tp) + b * (l.model.numHeads / tp) * t * t;
  double elements = input + layers * block;
  if (head) elements += b * t * (c + l.model.vocabSize + 3);
  if (embedding) elements += 2 * b * t;  // token ids and targets (int32)
  return bytes * elements;
}

double recomputedBytes(const Layout& l, int32_t layers, bool embedding, bool head,
                       const RunFormat& format) {
  if (!l.recompute) return 0.0;
  Layout kept = l;
  kept.recompute = false;
  return format.recomputeEachLayer
             ? activationBytesPerMicroBatch(kept, 1, false, false, format)
             : activationBytesPerMicroBatch(kept, layers, embedding, head, format);
}

double stageActivationBytes(const Layout& l, const std::vector<ChunkExtent>& chunks,
                            double inFlight, const RunFormat& format) {
  double perMicroBatch = 0, recomputed = 0;
  for (const ChunkExtent& c : chunks) {
    perMicroBatch = std::max(
        perMicroBatch, activationBytesPerMicroBatch(l, c.layers, c.embedding, c.head, format));
    recomputed = std::max(recomputed, recomputedBytes(l, c.layers, c.embedding, c.head, format));
  }
  return inFlight * perMicroBatch + recomputed;
}

}  // namespace bubblescope::layout
