// Learning-rate schedule: linear warm-up, then cosine decay to a floor.
#pragma once

#include <cstdint>

#include "common/status.h"

namespace bubblescope::engine {

struct LrSchedule {
  double peak = 3e-4;       // learning rate at the end of warm-up
  double minRatio = 0.1;    // floor = peak * minRatio, reached at totalSteps
  int64_t warmupSteps = 0;  // steps 0..warmupSteps-1 ramp up linearly
  int64_t totalSteps = 1;   // schedule horizon; steps past it stay at the floor

  // Learning rate of (0-based) step `step`: peak * (step + 1) / warmupSteps
  // during warm-up, then floor + (peak - floor) * (1 + cos(pi * progress)) / 2.
  double at(int64_t step) const;
  Status validate() const;
};

}  // namespace bubblescope::engine
