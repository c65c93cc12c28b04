#include "planning/schedule_playback.h"

#include <algorithm>
#include <tuple>

namespace bubblescope::layout {

std::vector<PlaybackOp> playbackOrder(const Schedule& schedule, const Simulation& sim) {
  std::vector<PlaybackOp> order;
  for (int32_t k = 0; k < static_cast<int32_t>(sim.stages.size()); ++k) {
    for (const OpInterval& iv : sim.stages[k].timeline) {
      const Op& op = schedule.stageOps[k][iv.opIndex];
      if (isPointToPoint(op.type) || !(iv.end > iv.start)) continue;
      order.push_back({k, iv.opIndex, op, iv.start, iv.end});
    }
  }
  std::stable_sort(order.begin(), order.end(), [](const PlaybackOp& a, const PlaybackOp& b) {
    return std::tie(a.start, a.stage, a.opIndex) < std::tie(b.start, b.stage, b.opIndex);
  });
  return order;
}

double bubbleSoFar(const std::vector<PlaybackOp>& order, int32_t stages, size_t shown) {
  shown = std::min(shown, order.size());
  double busy = 0, until = 0;
  for (size_t i = 0; i < shown; ++i) {
    busy += order[i].end - order[i].start;
    until = std::max(until, order[i].end);
  }
  if (!(until > 0) || stages < 1) return 0.0;
  return 1.0 - busy / (stages * until);
}

std::vector<std::vector<InFlightPoint>> activationsInFlight(const std::vector<PlaybackOp>& order,
                                                            int32_t stages, size_t shown) {
  shown = std::min(shown, order.size());
  // (time, delta) per stage; at equal times a release comes before a hold,
  // as a stage frees an activation before its next forward starts.
  std::vector<std::vector<std::pair<double, int32_t>>> changes(std::max(stages, 0));
  for (size_t i = 0; i < shown; ++i) {
    const PlaybackOp& o = order[i];
    if (o.stage < 0 || o.stage >= stages) continue;
    if (o.op.type == OpType::kForward) changes[o.stage].push_back({o.start, +1});
    if (o.op.type == OpType::kBackward || o.op.type == OpType::kBackwardWeight) {
      changes[o.stage].push_back({o.end, -1});
    }
  }
  std::vector<std::vector<InFlightPoint>> out(changes.size());
  for (size_t k = 0; k < changes.size(); ++k) {
    std::sort(changes[k].begin(), changes[k].end());
    std::vector<InFlightPoint>& pts = out[k];
    pts.push_back({0.0, 0});
    int32_t count = 0;
    for (size_t i = 0; i < changes[k].size();) {
      const double t = changes[k][i].first;
      for (; i < changes[k].size() && changes[k][i].first == t; ++i) count += changes[k][i].second;
      if (pts.back().time == t) {
        pts.back().count = count;
      } else if (pts.back().count != count) {
        pts.push_back({t, count});
      }
    }
  }
  return out;
}

int32_t peakOf(const std::vector<InFlightPoint>& points) {
  int32_t peak = 0;
  for (const InFlightPoint& p : points) peak = std::max(peak, p.count);
  return peak;
}

}  // namespace bubblescope::layout
