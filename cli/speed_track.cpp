#include "cli/speed_track.h"

#include <cmath>

#include "common/median.h"

namespace bubblescope::cli {

double SpeedTrack::at(double position) const {
  if (position <= refs_.front().first) return refs_.front().second;
  for (size_t i = 1; i < refs_.size(); ++i) {
    const auto& [x1, y1] = refs_[i];
    if (position <= x1) {
      const auto& [x0, y0] = refs_[i - 1];
      return x1 > x0 ? y0 + (y1 - y0) * (position - x0) / (x1 - x0) : y1;
    }
  }
  return refs_.back().second;
}

double SpeedTrack::median() const {
  std::vector<double> steps;
  for (const auto& r : refs_) steps.push_back(r.second);
  return bubblescope::median(steps);
}

double SpeedTrack::factor(double position) const {
  const double f = median() / at(position);
  return std::isfinite(f) && f > 0 ? f : 1.0;
}

}  // namespace bubblescope::cli
