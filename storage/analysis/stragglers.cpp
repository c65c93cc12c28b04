#include "storage/analysis/stragglers.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace bubblescope::analysis {
namespace {

struct Lateness {
  int32_t lateSteps = 0;
  int32_t steps = 0;
  double lateNsSum = 0;

  bool flagged(const StragglerOptions& o) const {
    return lateSteps > 0 && lateSteps >= std::ceil(o.minLateShare * steps);
  }
};

int64_t lowerMedian(std::vector<int64_t> values) {
  const size_t mid = (values.size() - 1) / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  return values[mid];
}

}  // namespace

StragglerSample stragglerSampleOf(const RankStepMetrics& m) {
  return {m.rank, m.step, m.stepNs, m.computeNs, m.lastCollectiveStartNs};
}

std::vector<Straggler> findStragglers(const std::vector<StragglerSample>& samples,
                                      const std::map<int32_t, int32_t>& stageOfRank,
                                      const StragglerOptions& options) {
  // (stage, step) -> the metrics of that stage's ranks in that step.
  std::map<std::pair<int32_t, int32_t>, std::vector<const StragglerSample*>> groups;
  for (const StragglerSample& m : samples) {
    auto it = stageOfRank.find(m.rank);
    groups[{it == stageOfRank.end() ? 0 : it->second, m.step}].push_back(&m);
  }
  std::map<int32_t, Lateness> compute, arrival;
  for (const auto& [key, group] : groups) {
    if (group.size() < 2) continue;
    std::vector<int64_t> stepNs, computeNs, arrivalNs;
    for (const StragglerSample* m : group) {
      stepNs.push_back(m->stepNs);
      computeNs.push_back(m->computeNs);
      if (m->lastCollectiveStartNs >= 0) arrivalNs.push_back(m->lastCollectiveStartNs);
    }
    const double threshold = options.thresholdFraction * lowerMedian(stepNs);
    const int64_t computeBase = lowerMedian(computeNs);
    const bool arrivals = arrivalNs.size() >= 2;
    const int64_t arrivalBase = arrivals ? lowerMedian(arrivalNs) : 0;
    for (const StragglerSample* m : group) {
      Lateness& c = compute[m->rank];
      ++c.steps;
      if (const double late = m->computeNs - computeBase; late > threshold) {
        ++c.lateSteps;
        c.lateNsSum += late;
      }
      if (!arrivals || m->lastCollectiveStartNs < 0) continue;
      Lateness& a = arrival[m->rank];
      ++a.steps;
      if (const double late = m->lastCollectiveStartNs - arrivalBase; late > threshold) {
        ++a.lateSteps;
        a.lateNsSum += late;
      }
    }
  }
  std::vector<Straggler> out;
  for (const auto& [rank, c] : compute) {
    const auto a = arrival.find(rank);
    const Lateness* chosen = nullptr;
    const char* reason = "";
    if (c.flagged(options)) {
      chosen = &c;
      reason = "compute";
    } else if (a != arrival.end() && a->second.flagged(options)) {
      chosen = &a->second;
      reason = "collective arrival";
    }
    if (!chosen) continue;
    out.push_back(
        {rank, reason, chosen->lateNsSum / chosen->lateSteps, chosen->lateSteps, chosen->steps});
  }
  return out;
}

}  // namespace bubblescope::analysis
