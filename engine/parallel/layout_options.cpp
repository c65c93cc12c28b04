#include "engine/parallel/layout_options.h"

#include <algorithm>

namespace bubblescope::engine {

TrainerOptions trainerOptionsFor(const layout::Layout& l) {
  TrainerOptions o;
  o.model = l.model;
  o.batchSize = l.microBatchSize;
  o.microBatches = l.microBatches;
  o.seed = l.seed;
  o.dataPath = l.dataFile;
  o.schedule.peak = l.learningRate;
  o.schedule.totalSteps = l.steps;
  o.schedule.warmupSteps = std::min<int64_t>(100, l.steps / 10);
  return o;
}

ParallelOptions parallelOptionsFor(const layout::Layout& l) {
  ParallelOptions p;
  p.zeroStage = l.zeroStage;
  p.overlap = l.overlap;
  p.bucketElements = l.bucketElementCount(sizeof(float));
  p.compression = l.gradCompression;
  return p;
}

}  // namespace bubblescope::engine
