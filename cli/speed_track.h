// SpeedTrack: the machine's speed while `calibrate --model` runs its
// layouts (cli/calibrate_benchmark.h): one reference layout's step measured
// at places in the sequence of runs, and what each run's costs are scaled
// by so every run is costed at the references' median speed.
//
// Contract: references are added in ascending position (a run's index in
// the sequence; a reference between runs k and k + 1 at k + 0.5). at()
// interpolates the reference step linearly between the references around a
// position and takes the nearest one outside them; factor() is median / at,
// and 1 where that is not a finite number > 0 (a reference without a step).
// Both need at least one reference.
#pragma once

#include <utility>
#include <vector>

namespace bubblescope::cli {

class SpeedTrack {
 public:
  void add(double position, double stepNs) { refs_.emplace_back(position, stepNs); }
  const std::vector<std::pair<double, double>>& references() const { return refs_; }
  bool empty() const { return refs_.empty(); }

  double at(double position) const;
  double median() const;
  double factor(double position) const;

 private:
  std::vector<std::pair<double, double>> refs_;  // (position, step ns)
};

}  // namespace bubblescope::cli
