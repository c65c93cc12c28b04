#include "storage/import/launch_index.h"

#include <algorithm>
#include <limits>

namespace bubblescope::import {

void LaunchIndex::addLaunch(int64_t correlation, int64_t startNs, int64_t tid) {
  launches_.push_back({correlation, startNs, tid});
  sealed_ = false;
}

void LaunchIndex::addGpuRecord(int64_t correlation, int64_t startNs, int64_t endNs) {
  gpuSpans_.push_back({correlation, startNs, endNs});
}

void LaunchIndex::seal() {
  std::stable_sort(launches_.begin(), launches_.end(),
                   [](const Launch& a, const Launch& b) { return a.correlation < b.correlation; });
  sealed_ = true;
}

const Launch* LaunchIndex::find(int64_t correlation) const {
  if (!sealed_) return nullptr;
  auto l = std::lower_bound(launches_.begin(), launches_.end(), correlation,
                            [](const Launch& a, int64_t c) { return a.correlation < c; });
  return l == launches_.end() || l->correlation != correlation ? nullptr : &*l;
}

std::vector<trace_model::StepRecord> LaunchIndex::gpuStepWindows(
    std::vector<trace_model::StepRecord> steps) const {
  std::sort(steps.begin(), steps.end(),
            [](const auto& a, const auto& b) { return a.startNs < b.startNs; });
  if (steps.empty() || gpuSpans_.empty()) return steps;

  // First start and last end of the GPU work launched in each step.
  constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> first(steps.size(), kNone), last(steps.size(), -kNone);
  for (const GpuSpan& g : gpuSpans_) {
    const Launch* l = find(g.correlation);
    if (l == nullptr) continue;
    const int64_t launchNs = l->startNs;
    auto s = std::upper_bound(steps.begin(), steps.end(), launchNs,
                              [](int64_t t, const auto& step) { return t < step.startNs; });
    if (s == steps.begin()) continue;
    const size_t i = static_cast<size_t>(s - steps.begin()) - 1;
    if (launchNs >= steps[i].endNs) continue;
    first[i] = std::min(first[i], g.startNs);
    last[i] = std::max(last[i], g.endNs);
  }
  // A step's GPU window runs from its first GPU record to the next step's
  // first (so the gaps between steps count as idle, as in HTA), the last
  // step's to its last record's end.
  for (size_t i = 0; i < steps.size(); ++i) {
    if (first[i] == kNone) continue;
    int64_t end = last[i];
    for (size_t j = i + 1; j < steps.size(); ++j) {
      if (first[j] != kNone) {
        end = std::max(first[j], first[i]);
        break;
      }
    }
    steps[i].startNs = first[i];
    steps[i].endNs = end;
  }
  return steps;
}

}  // namespace bubblescope::import
