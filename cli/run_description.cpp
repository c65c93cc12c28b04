#include "cli/run_description.h"

#include <nlohmann/json.hpp>

namespace bubblescope::cli {

std::string runName(const layout::Layout& l) {
  std::string name = "dp" + std::to_string(l.dp);
  if (l.tp > 1) name += "-tp" + std::to_string(l.tp);
  if (l.pp > 1) name += "-pp" + std::to_string(l.pp);
  if (l.ep > 1) name += "-ep" + std::to_string(l.ep);
  if (layout::shardsOptimizer(l.zeroStage)) {
    name += "-zero" + std::to_string(layout::zeroStageNumber(l.zeroStage));
  }
  if (!l.overlap) name += "-no-overlap";
  // What the gradients cross the link as ("dp2-int8 small").
  if (l.gradCompression.compresses()) name += "-" + l.gradCompression.toString();
  if (l.allReduce != layout::AllReduceAlgorithm::kFlat) {
    name += std::string("-") + layout::allReduceAlgorithmName(l.allReduce);
  }
  // A pipeline's schedule tells runs of one layout apart ("dp1-pp4 1f1b small").
  if (l.pp > 1) {
    name += std::string(" ") + layout::scheduleKindName(l.schedule);
    if (l.virtualChunks > 1) name += " v" + std::to_string(l.virtualChunks);
  }
  return name + " " + l.model.preset;
}

layout::Layout singleProcessLayout(const engine::TrainerOptions& o, int64_t steps,
                                   layout::Backend backend) {
  layout::Layout l;  // dp = tp = pp = 1, ZeRO 0, 1f1b with v = 1
  l.model = o.model;
  l.microBatches = o.microBatches;
  l.microBatchSize = static_cast<int32_t>(o.batchSize);
  l.globalBatch = o.batchSize * o.microBatches;
  l.steps = static_cast<int32_t>(steps);
  l.seed = o.seed;
  l.backend = backend;
  l.learningRate = o.schedule.peak;
  l.dataFile = o.dataPath;
  return l;
}

storage::RunInfo describeRun(const layout::Layout& l, int32_t worldSize, const std::string& name) {
  storage::RunInfo info;
  info.name = name.empty() ? runName(l) : name;
  info.layoutJson = layout::toJson(l).dump();
  info.modelJson = layout::toJson(l.model).dump();
  info.backend = layout::backendName(l.backend);
  info.worldSize = worldSize;
  return info;
}

}  // namespace bubblescope::cli
