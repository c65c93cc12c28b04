#include "planning/expert_parallel_volume.h"

#include "engine/layout/stage_split.h"

namespace bubblescope::layout {

double epBlockMicroBatchBytes(const EpVolumeInput& in) {
  if (in.ep <= 1) return 0.0;
  const double rows = static_cast<double>(in.topK) * static_cast<double>(in.tokensPerMicroBatch);
  const double elements = kEpDataAllToAllsPerBlock * rows * in.hidden + in.experts;
  return elements * static_cast<double>(in.elementBytes);
}

double epVolumeBytesPerStep(const EpVolumeInput& in) {
  if (in.ep <= 1) return 0.0;
  return epBlockMicroBatchBytes(in) * in.microBatches * in.moeBlocks +
         static_cast<double>(kEpGradNormBytesPerStep);
}

double epOffRankShare(int32_t ep) {
  return ep <= 1 ? 0.0 : static_cast<double>(ep - 1) / ep;
}

int32_t moeBlocksOnStage(const Layout& layout, int32_t stage) {
  const ModelConfig& model = layout.model;
  if (layout.pp <= 1) return stage == 0 ? model.moeBlockCount() : 0;
  if (stage < 0 || stage >= layout.pp) return 0;
  const int32_t chunks = layout.schedule == ScheduleKind::kInterleaved ? layout.virtualChunks : 1;
  auto split = stageSplit(model, layout.pp, chunks, layout.stageLayers);
  if (!split.isOk()) return 0;
  const std::vector<int32_t> first = firstLayers(*split);
  int32_t blocks = 0;
  for (int32_t c = 0; c < chunks; ++c) {  // chunk c of stage k is virtual stage c·pp + k
    const auto v = static_cast<size_t>(c * layout.pp + stage);
    for (int32_t layer = first[v]; layer < first[v] + (*split)[v]; ++layer)
      blocks += model.isMoeBlock(layer) ? 1 : 0;
  }
  return blocks;
}

EpVolumeInput epVolumeInput(const Layout& layout, int32_t ep, int32_t stage) {
  return {.tokensPerMicroBatch = int64_t{layout.microBatchSize} * layout.model.seqLen,
          .topK = layout.model.topK,
          .hidden = layout.model.hidden,
          .experts = layout.model.experts,
          .ep = ep,
          .moeBlocks = moeBlocksOnStage(layout, stage),
          .microBatches = layout.microBatches};
}

}  // namespace bubblescope::layout
