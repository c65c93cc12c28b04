#include "gui/expert_load_model.h"

#include <algorithm>

namespace bubblescope::gui {

Status ExpertLoadModel::load(storage::TraceReader& reader, int64_t runId) {
  // Every rank's samples (each routed its own tokens), as `report` reads them.
  auto samples = reader.samples(runId);
  if (!samples.isOk()) {
    clear();
    return samples.status();
  }
  setLoads(analysis::moeLoadFromSamples(*samples));
  return Status::ok();
}

void ExpertLoadModel::setLoads(std::vector<analysis::MoeBlockLoad> loads) {
  blocks_ = std::move(loads);
  scaleMax_ = 2.0;
  for (size_t b = 0; b < blocks_.size(); ++b) {
    for (const auto& s : blocks_[b].perStep) {
      if (s.imbalance) scaleMax_ = std::max(scaleMax_, *s.imbalance);
    }
  }
}

std::optional<ExpertLoadCell> ExpertLoadModel::cell(size_t block, int32_t expert,
                                                    int32_t step) const {
  if (block >= blocks_.size() || expert < 0 || step < 0) return std::nullopt;
  const auto& l = blocks_[block];
  if (expert >= l.experts || step >= static_cast<int32_t>(l.perStep.size())) return std::nullopt;
  const analysis::MoeStepLoad& s = l.perStep[static_cast<size_t>(step)];
  if (s.routed <= 0) return std::nullopt;
  const auto e = static_cast<size_t>(expert);
  const double mean = static_cast<double>(s.routed) / static_cast<double>(l.experts);
  return ExpertLoadCell{.routed = s.routedByExpert[e],
                        .dropped = s.droppedByExpert[e],
                        .relativeLoad = static_cast<double>(s.routedByExpert[e]) / mean};
}

QString ExpertLoadModel::cellText(size_t block, int32_t expert, int32_t step) const {
  const auto c = cell(block, expert, step);
  if (!c) return {};
  return QStringLiteral("h.%1 · expert %2 · step %3: %4 routed (%5× the mean), %6 dropped")
      .arg(blocks_[block].block)
      .arg(expert)
      .arg(step)
      .arg(c->routed)
      .arg(c->relativeLoad, 0, 'f', 2)
      .arg(c->dropped);
}

int64_t ExpertLoadModel::stepTimeNs(size_t block, int32_t step) const {
  if (block >= blocks_.size() || step < 0 ||
      step >= static_cast<int32_t>(blocks_[block].perStep.size()))
    return 0;
  return blocks_[block].perStep[static_cast<size_t>(step)].timeNs;
}

}  // namespace bubblescope::gui
