// StepTimes: how one rank's time divides over a window, one step or the sum
// of its steps: the metric fields of docs/design.md ("Metrics"),
// written once. RankStepMetrics (one step, rank_step_analyzer.h) and
// RankReport (the sum over a rank's steps, run_report.h) are StepTimes.
//
// Units: ns, bytes.
#pragma once

#include <array>
#include <cstdint>

#include "trace_model/event.h"

namespace bubblescope::analysis {

struct StepTimes {
  int64_t stepNs = 0;
  int64_t computeNs = 0;
  int64_t commNs = 0;
  int64_t overlapNs = 0;      // |comm ∩ compute|
  int64_t exposedCommNs = 0;  // |comm \ compute|
  int64_t waitNs = 0;         // |wait \ (compute ∪ comm)|
  int64_t idleNs = 0;         // step − |compute ∪ comm ∪ wait|
  std::array<int64_t, trace_model::kParallelDimCount> commNsByDim{};
  // |comm of the dimension \ compute|: what of it the step waits for.
  std::array<int64_t, trace_model::kParallelDimCount> exposedCommNsByDim{};
  std::array<int64_t, trace_model::kParallelDimCount> commBytesByDim{};
  // Data-parallel volume: all-reduce bytes count twice (formulas.h).
  std::array<int64_t, trace_model::kParallelDimCount> commVolumeByDim{};

  // Adds every field of `other` (a rank's steps summed).
  StepTimes& operator+=(const StepTimes& other) {
    stepNs += other.stepNs;
    computeNs += other.computeNs;
    commNs += other.commNs;
    overlapNs += other.overlapNs;
    exposedCommNs += other.exposedCommNs;
    waitNs += other.waitNs;
    idleNs += other.idleNs;
    for (size_t d = 0; d < commNsByDim.size(); ++d) {
      commNsByDim[d] += other.commNsByDim[d];
      exposedCommNsByDim[d] += other.exposedCommNsByDim[d];
      commBytesByDim[d] += other.commBytesByDim[d];
      commVolumeByDim[d] += other.commVolumeByDim[d];
    }
    return *this;
  }
};

}  // namespace bubblescope::analysis
