// StepWindow: where one training step lies on the run's aligned timeline,
// for one rank (its first to last span of the step) or for the whole run
// (the earliest start to the latest end over the ranks).
#pragma once

#include <cstdint>

namespace bubblescope::trace_model {

struct StepWindow {
  int32_t step = 0;
  int64_t startNs = 0;
  int64_t endNs = 0;  // exclusive, >= startNs

  bool operator==(const StepWindow&) const = default;
};

}  // namespace bubblescope::trace_model
