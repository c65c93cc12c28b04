#include "planning/activation_bytes.h"

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

}  // namespace bubblescope::layout
