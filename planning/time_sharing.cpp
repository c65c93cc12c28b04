#include "planning/time_sharing.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "planning/core_placement.h"

namespace bubblescope::layout {
namespace {

bool isReceive(OpType t) {
  return t == OpType::kRecvActivation || t == OpType::kRecvGrad;
}

// s for `runnable` ranks, max(1, (n + B) / C), of which the op pays 1 + (s - 1) · paid.
double stretchOf(double runnable, const TimeSharing& sharing) {
  if (sharing.cores <= 0) return 1.0;
  const double s =
      std::max(1.0, (std::max(0.0, runnable) + sharing.background) / sharing.cores);
  return 1.0 + (s - 1.0) * sharing.paid;
}

// n(t) as steps, and the integral of 1 / s(t) from the first breakpoint.
class Occupancy {
 public:
  Occupancy(const Schedule& schedule, const Simulation& sim, const TimeSharing& sharing)
      : sharing_(sharing) {
    std::vector<std::pair<double, double>> events;  // (time, change of n)
    for (int32_t k = 0; k < schedule.stages; ++k) {
      for (const OpInterval& op : sim.stages[k].timeline) {
        if (op.end <= op.start || isReceive(schedule.stageOps[k][op.opIndex].type)) continue;
        events.emplace_back(op.start, sharing.ranksPerStage);
        events.emplace_back(op.end, -sharing.ranksPerStage);
      }
    }
    std::sort(events.begin(), events.end());
    double n = 0, integral = 0;
    for (size_t i = 0; i < events.size();) {
      const double t = events[i].first;
      if (!times_.empty()) integral += (t - times_.back()) / stretch(n);
      while (i < events.size() && events[i].first == t) n += events[i++].second;
      times_.push_back(t);
      integrals_.push_back(integral);
      runnable_.push_back(n);
    }
  }

  // The integral of 1 / s over [0, t] (0 before the first breakpoint).
  double inverseStretchIntegral(double t) const {
    auto it = std::upper_bound(times_.begin(), times_.end(), t);
    if (it == times_.begin()) return 0.0;
    const size_t j = static_cast<size_t>(it - times_.begin()) - 1;
    return integrals_[j] + (t - times_[j]) / stretch(runnable_[j]);
  }

 private:
  double stretch(double runnable) const { return stretchOf(runnable, sharing_); }

  const TimeSharing& sharing_;
  std::vector<double> times_, integrals_, runnable_;  // breakpoints, from each on
};

Status checkShape(const Schedule& s, const OpCosts& costs, const char* name) {
  if (static_cast<int32_t>(costs.size()) != s.stages) {
    return Status::invalidArgument(std::string(name) + " has " + std::to_string(costs.size()) +
                                   " stages, the schedule " + std::to_string(s.stages));
  }
  for (int32_t k = 0; k < s.stages; ++k) {
    if (costs[k].size() != s.stageOps[k].size()) {
      return Status::invalidArgument(std::string(name) + " of stage " + std::to_string(k) +
                                     " has " + std::to_string(costs[k].size()) + " ops, the " +
                                     "schedule " + std::to_string(s.stageOps[k].size()));
    }
  }
  return Status::ok();
}

}  // namespace

double meanStretch(const OpCosts& durations, const OpCosts& fixedNs, const OpCosts& workNs) {
  double work = 0, stretched = 0;
  for (size_t k = 0; k < workNs.size(); ++k) {
    for (size_t i = 0; i < workNs[k].size(); ++i) {
      work += workNs[k][i];
      stretched += durations[k][i] - fixedNs[k][i];
    }
  }
  return work > 0 ? stretched / work : 1.0;
}

Result<TimeSharedSimulation> simulateTimeShared(const Schedule& schedule, const CostModel& base,
                                                const OpCosts& fixedNs, const OpCosts& workNs,
                                                const TimeSharing& sharing) {
  if (static_cast<int32_t>(schedule.stageOps.size()) != schedule.stages) {
    return Status::invalidArgument("schedule has " + std::to_string(schedule.stageOps.size()) +
                                   " op lists for " + std::to_string(schedule.stages) + " stages");
  }
  BS_RETURN_IF_ERROR(checkShape(schedule, fixedNs, "the fixed costs"));
  BS_RETURN_IF_ERROR(checkShape(schedule, workNs, "the work costs"));
  for (int32_t k = 0; k < schedule.stages; ++k) {
    for (size_t i = 0; i < workNs[k].size(); ++i) {
      if (!(workNs[k][i] >= 0) || !std::isfinite(workNs[k][i])) {
        return Status::invalidArgument("work cost of stage " + std::to_string(k) + " op " +
                                       std::to_string(i) + " is not a finite number >= 0");
      }
    }
  }
  if (!(sharing.paid >= 0 && sharing.paid <= 1)) {
    return Status::invalidArgument("the share of the stretch paid must be from 0 to 1, got " +
                                   std::to_string(sharing.paid));
  }
  if (sharing.model == CoreModel::kPlacement &&
      (sharing.ranksPerStage != 1 || sharing.background != 0)) {
    return Status::invalidArgument(
        "the placement model of shared cores takes one rank a stage and no background load");
  }
  const double uniform = stretchOf(schedule.stages * sharing.ranksPerStage, sharing);
  OpCosts stretch(schedule.stages);
  for (int32_t k = 0; k < schedule.stages; ++k) stretch[k].assign(workNs[k].size(), uniform);

  TimeSharedSimulation out;
  out.durations = fixedNs;
  constexpr int32_t kMaxRounds = 200;
  constexpr double kTolerance = 1e-6;
  for (out.rounds = 1;; ++out.rounds) {
    for (int32_t k = 0; k < schedule.stages; ++k) {
      for (size_t i = 0; i < workNs[k].size(); ++i) {
        // A negative fixed cost is the simulator's own (a receive's wait).
        if (fixedNs[k][i] >= 0) out.durations[k][i] = fixedNs[k][i] + workNs[k][i] * stretch[k][i];
      }
    }
    BS_ASSIGN_OR_RETURN(out.simulation, simulate(schedule, base, out.durations));
    if (out.converged || out.rounds >= kMaxRounds) break;
    // Each round's occupancy by the model asked for, not both.
    const bool placed = sharing.model == CoreModel::kPlacement;
    std::optional<Occupancy> n;
    std::optional<CorePlacement> cores;
    if (placed) {
      cores.emplace(schedule, out.simulation, sharing.cores, sharing.paid);
    } else {
      n.emplace(schedule, out.simulation, sharing);
    }
    double moved = 0;
    for (int32_t k = 0; k < schedule.stages; ++k) {
      for (const OpInterval& op : out.simulation.stages[k].timeline) {
        double& s = stretch[k][op.opIndex];
        if (op.end <= op.start || workNs[k][op.opIndex] <= 0) continue;
        const double inverse =
            placed ? cores->inverseStretchIntegral(k, op.end) -
                         cores->inverseStretchIntegral(k, op.start)
                   : n->inverseStretchIntegral(op.end) - n->inverseStretchIntegral(op.start);
        if (!(inverse > 0)) continue;
        const double next = (s + (op.end - op.start) / inverse) / 2;
        moved = std::max(moved, std::fabs(next - s));
        s = next;
      }
    }
    out.converged = moved <= kTolerance;
  }
  return out;
}

}  // namespace bubblescope::layout
