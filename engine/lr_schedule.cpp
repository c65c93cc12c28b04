#include "engine/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace bubblescope::engine {

double LrSchedule::at(int64_t step) const {
  if (step < warmupSteps) {
    return peak * static_cast<double>(step + 1) / static_cast<double>(warmupSteps);
  }
  const double floor = peak * minRatio;
  const int64_t decaySteps = std::max<int64_t>(1, totalSteps - warmupSteps);
  const double progress = std::clamp(
      static_cast<double>(step - warmupSteps) / static_cast<double>(decaySteps), 0.0, 1.0);
  return floor + (peak - floor) * 0.5 * (1.0 + std::cos(3.141592653589793 * progress));
}

Status LrSchedule::validate() const {
  if (!(peak > 0.0) || !std::isfinite(peak)) {
    return Status::invalidArgument("learning rate must be positive, got " + std::to_string(peak));
  }
  if (minRatio < 0.0 || minRatio > 1.0) {
    return Status::invalidArgument("minimum learning-rate ratio must be in [0, 1], got " +
                                   std::to_string(minRatio));
  }
  if (warmupSteps < 0) {
    return Status::invalidArgument("warm-up steps must not be negative, got " +
                                   std::to_string(warmupSteps));
  }
  if (totalSteps <= 0) {
    return Status::invalidArgument("schedule steps must be positive, got " +
                                   std::to_string(totalSteps));
  }
  return Status::ok();
}

}  // namespace bubblescope::engine
