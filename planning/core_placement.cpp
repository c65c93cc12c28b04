#include "planning/core_placement.h"

#include <algorithm>
#include <tuple>

namespace bubblescope::layout {
namespace {

bool isReceive(OpType t) { return t == OpType::kRecvActivation || t == OpType::kRecvGrad; }

// One stretch of time a stage's rank is runnable, and the stage whose message
// woke it (-1: none, e.g. the step's start or the meeting before the
// optimizer step).
struct Run {
  double start = 0;
  double end = 0;
  int32_t waker = -1;
};

std::vector<Run> runsOf(const Schedule& schedule, const StageStats& stage, int32_t k) {
  std::vector<Run> runs;
  int32_t waker = -1;
  bool open = false;
  for (const OpInterval& op : stage.timeline) {
    const Op& o = schedule.stageOps[k][op.opIndex];
    if (isReceive(o.type)) {
      if (op.end > op.start) {
        open = false;  // blocked: the next op starts a run
        waker = o.peer;
      }
      continue;
    }
    if (op.end <= op.start) continue;
    if (open && op.start <= runs.back().end) {
      runs.back().end = std::max(runs.back().end, op.end);
    } else {
      runs.push_back({op.start, op.end, waker});
      open = true;
      waker = -1;
    }
  }
  return runs;
}

// The cores and who is on them, by the rules of core_placement.h.
class Cores {
 public:
  Cores(int32_t cores, int32_t stages)
      : residents_(static_cast<size_t>(cores)), core_(stages, -1), last_(stages, -1) {}

  void wake(int32_t k, int32_t waker) {
    if (core_[k] >= 0) return;  // running already
    int32_t target = -1;
    if (last_[k] >= 0 && residents_[last_[k]].empty()) target = last_[k];
    for (size_t c = 0; target < 0 && c < residents_.size(); ++c) {
      if (residents_[c].empty()) target = static_cast<int32_t>(c);
    }
    if (target < 0 && waker >= 0 && waker < static_cast<int32_t>(core_.size()) &&
        core_[waker] >= 0) {
      target = core_[waker];
    }
    if (target < 0) target = mostOrLeast(false);
    place(k, target);
  }

  void block(int32_t k) {
    const int32_t c = core_[k];
    if (c < 0) return;
    auto& r = residents_[c];
    r.erase(std::find(r.begin(), r.end(), k));
    last_[k] = c;
    core_[k] = -1;
    // Idle balancing: an idle core takes the longest-resident rank of the
    // most crowded core, while one holds two or more.
    for (;;) {
      const int32_t busiest = mostOrLeast(true);
      const int32_t idle = mostOrLeast(false);
      if (residents_[busiest].size() < 2 || !residents_[idle].empty()) break;
      const int32_t moved = residents_[busiest].front();
      residents_[busiest].erase(residents_[busiest].begin());
      place(moved, idle);
    }
  }

  // The ranks on stage k's core, 0 while it is blocked.
  int32_t sharers(int32_t k) const {
    return core_[k] < 0 ? 0 : static_cast<int32_t>(residents_[core_[k]].size());
  }

 private:
  void place(int32_t k, int32_t c) {
    residents_[c].push_back(k);
    core_[k] = c;
  }

  // The most (or least) crowded core; ties to the lowest index.
  int32_t mostOrLeast(bool most) const {
    int32_t best = 0;
    for (size_t c = 1; c < residents_.size(); ++c) {
      const size_t n = residents_[c].size(), b = residents_[best].size();
      if (most ? n > b : n < b) best = static_cast<int32_t>(c);
    }
    return best;
  }

  std::vector<std::vector<int32_t>> residents_;  // per core, in order of arrival
  std::vector<int32_t> core_;                    // per stage, -1 while blocked
  std::vector<int32_t> last_;                    // per stage, the core it last ran on
};

}  // namespace

CorePlacement::CorePlacement(const Schedule& schedule, const Simulation& sim, int32_t cores,
                             double paid)
    : paid_(paid), stages_(sim.stages.size()) {
  const int32_t p = static_cast<int32_t>(sim.stages.size());
  // (time, 0 for a block and 1 for a wake, stage, waker): at one instant the
  // blocks first, so a core freed then can take the rank that wakes.
  std::vector<std::tuple<double, int32_t, int32_t, int32_t>> events;
  for (int32_t k = 0; k < p && k < schedule.stages; ++k) {
    for (const Run& r : runsOf(schedule, sim.stages[k], k)) {
      events.emplace_back(r.start, 1, k, r.waker);
      events.emplace_back(r.end, 0, k, -1);
    }
  }
  std::sort(events.begin(), events.end());
  Cores placed(std::max(1, cores), p);
  for (size_t i = 0; i < events.size();) {
    const double t = std::get<0>(events[i]);
    for (; i < events.size() && std::get<0>(events[i]) == t; ++i) {
      const auto& [time, kind, k, waker] = events[i];
      if (kind == 0) {
        placed.block(k);
      } else {
        placed.wake(k, waker);
      }
    }
    for (int32_t k = 0; k < p; ++k) {
      std::vector<Breakpoint>& b = stages_[k];
      const int32_t n = placed.sharers(k);
      if (!b.empty() && b.back().sharers == n) continue;
      double integral = 0;
      if (!b.empty()) {
        const double s = b.back().sharers > 1 ? 1 + (b.back().sharers - 1) * paid_ : 1.0;
        integral = b.back().integral + (t - b.back().time) / s;
      }
      b.push_back({t, n, integral});
    }
  }
}

double CorePlacement::inverseStretchIntegral(int32_t stage, double t) const {
  if (stage < 0 || stage >= static_cast<int32_t>(stages_.size())) return t;
  const std::vector<Breakpoint>& b = stages_[stage];
  auto it = std::upper_bound(b.begin(), b.end(), t,
                             [](double x, const Breakpoint& p) { return x < p.time; });
  if (it == b.begin()) return t - (b.empty() ? 0.0 : b.front().time);
  const Breakpoint& from = *(it - 1);
  const double s = from.sharers > 1 ? 1 + (from.sharers - 1) * paid_ : 1.0;
  return from.integral + (t - from.time) / s;
}

int32_t CorePlacement::sharersAt(int32_t stage, double t) const {
  if (stage < 0 || stage >= static_cast<int32_t>(stages_.size())) return 0;
  const std::vector<Breakpoint>& b = stages_[stage];
  auto it = std::upper_bound(b.begin(), b.end(), t,
                             [](double x, const Breakpoint& p) { return x < p.time; });
  return it == b.begin() ? 0 : (it - 1)->sharers;
}

}  // namespace bubblescope::layout
