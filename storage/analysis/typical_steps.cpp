#include "storage/analysis/typical_steps.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/median.h"

namespace bubblescope::analysis {

std::set<int32_t> typicalSteps(const std::map<int32_t, double>& stepNs) {
  std::set<int32_t> steps;
  std::vector<double> times;
  for (const auto& [step, ns] : stepNs) {
    steps.insert(step);
    if (ns > 0) times.push_back(ns);
  }
  if (times.size() < 3) return steps;
  const double mid = median(times);
  std::vector<double> deviations;
  for (double t : times) deviations.push_back(std::abs(t - mid));
  const double limit = mid + std::max(3 * 1.4826 * median(deviations), 0.05 * mid);
  for (const auto& [step, ns] : stepNs) {
    if (ns > 0 && !(ns <= limit)) steps.erase(step);
  }
  return steps;
}

}  // namespace bubblescope::analysis
