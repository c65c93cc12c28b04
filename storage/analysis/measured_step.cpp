#include "storage/analysis/measured_step.h"

#include <algorithm>
#include <limits>
#include <map>

#include "common/median.h"
#include "storage/analysis/bubbles.h"
#include "trace_model/interval_set.h"
#include "trace_model/step_window.h"

namespace bubblescope::analysis {
namespace {

using trace_model::Event;
using trace_model::EventKind;

// Run-wide window per step: the earliest start and latest end over the ranks.
std::map<int32_t, trace_model::StepWindow> runWindows(
    const std::vector<trace_model::StepRecord>& steps) {
  std::map<int32_t, trace_model::StepWindow> windows;
  for (const auto& s : steps) {
    auto [it, fresh] =
        windows.try_emplace(s.step, trace_model::StepWindow{s.step, s.startNs, s.endNs});
    if (fresh) continue;
    it->second.startNs = std::min(it->second.startNs, s.startNs);
    it->second.endNs = std::max(it->second.endNs, s.endNs);
  }
  return windows;
}

// The step of median length, leaving out the first when there are others.
trace_model::StepWindow medianStep(const std::map<int32_t, trace_model::StepWindow>& windows) {
  std::vector<trace_model::StepWindow> candidates;
  for (const auto& [step, w] : windows) {
    if (windows.size() > 1 && step == windows.begin()->first) continue;
    candidates.push_back(w);
  }
  std::stable_sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
    return a.endNs - a.startNs < b.endNs - b.startNs;
  });
  return candidates[(candidates.size() - 1) / 2];
}

bool isStageSpan(EventKind k) {
  return trace_model::categoryOf(k) == trace_model::EventCategory::kCompute;
}

}  // namespace

std::vector<std::string> oversubscribedHosts(const std::vector<trace_model::RankInfo>& ranks) {
  std::map<std::string, std::pair<int32_t, int32_t>> hosts;  // host -> (ranks, cores)
  for (const auto& r : ranks) {
    if (r.coresOnHost > 0 && r.ranksOnHost > r.coresOnHost) {
      hosts[r.host] = {r.ranksOnHost, r.coresOnHost};
    }
  }
  std::vector<std::string> lines;
  for (const auto& [host, rc] : hosts) {
    lines.push_back("host " + (host.empty() ? std::string("?") : host) + " ran " +
                    std::to_string(rc.first) + " ranks on " + std::to_string(rc.second) + " cores");
  }
  return lines;
}

Result<MeasuredStep> measuredStep(storage::TraceReader& reader, int64_t runId) {
  BS_ASSIGN_OR_RETURN(storage::RunRecord run, reader.run(runId));
  BS_ASSIGN_OR_RETURN(std::vector<trace_model::RankInfo> ranks, reader.ranks(runId));
  BS_ASSIGN_OR_RETURN(std::vector<trace_model::StepRecord> steps, reader.steps(runId));
  if (steps.empty()) {
    return Status::failedPrecondition("run " + std::to_string(runId) + " (" + run.info.name +
                                      ") has no step records");
  }
  const auto windows = runWindows(steps);
  const trace_model::StepWindow window = medianStep(windows);
  MeasuredStep out;
  out.step = window.step;
  out.startNs = window.startNs;
  out.durationNs = window.endNs - window.startNs;
  out.oversubscribed = oversubscribedHosts(ranks);

  std::map<int32_t, int32_t> stageRank;  // stage -> its lowest rank
  std::map<int32_t, bool> isStageRank;   // rank -> shown as its stage
  std::map<int32_t, int32_t> stageOf;    // rank -> its pipeline stage
  for (const auto& r : ranks) {
    stageOf[r.rank] = r.pp;
    auto [it, fresh] = stageRank.try_emplace(r.pp, r.rank);
    if (!fresh) it->second = std::min(it->second, r.rank);
  }
  for (const auto& [stage, rank] : stageRank) isStageRank[rank] = true;
  std::map<int32_t, trace_model::StepWindow> rankWindow;
  for (const auto& s : steps) {
    if (s.step == window.step) rankWindow[s.rank] = {s.step, s.startNs, s.endNs};
  }
  BS_ASSIGN_OR_RETURN(std::vector<Event> events,
                      reader.eventsInWindow(runId, {}, window.startNs, window.endNs));

  std::map<EventKind, std::vector<double>> durations;
  std::map<int32_t, MeasuredStage> stages;
  std::map<int32_t, std::vector<trace_model::Interval>> busy;  // of the stage ranks
  for (const auto& [stage, rank] : stageRank) stages[stage] = {stage, rank, {}, 0.0};
  for (const Event& e : events) {
    // Each rank's own window of the step (spans of the step before or after
    // overlap the run-wide window at its edges).
    const auto w = rankWindow.find(e.rank);
    if (w == rankWindow.end() || e.startNs < w->second.startNs || e.endNs > w->second.endNs) {
      continue;
    }
    const double ns = static_cast<double>(e.endNs - e.startNs);
    if (isStageSpan(e.kind)) {
      durations[e.kind].push_back(ns);
      out.chunks = std::max(out.chunks, e.chunk + 1);
    }
    if (e.kind == EventKind::kRecv && e.dim == trace_model::ParallelDim::kPp) {
      durations[e.kind].push_back(ns);
    }
    if (!isStageRank[e.rank]) continue;
    if (isBusy(e.lane, e.kind)) busy[e.rank].push_back({e.startNs, e.endNs});
    if (isStageSpan(e.kind)) {
      stages[stageOf[e.rank]].spans.push_back(
          {e.kind, e.startNs - window.startNs, e.endNs - window.startNs, e.microBatch, e.chunk});
    }
  }
  for (auto& [stage, s] : stages) {
    std::stable_sort(s.spans.begin(), s.spans.end(),
                     [](const StageSpan& a, const StageSpan& b) { return a.startNs < b.startNs; });
    const auto w = rankWindow.find(s.rank);
    if (w == rankWindow.end() || w->second.endNs <= w->second.startNs) continue;
    const auto idle =
        bubbleIntervals(w->second, trace_model::IntervalSet::fromUnsorted(busy[s.rank]));
    s.bubble = static_cast<double>(idle.totalNs()) / (w->second.endNs - w->second.startNs);
    out.stages.push_back(std::move(s));
  }
  out.costs.forwardNs = median(durations[EventKind::kForward]);
  out.costs.backwardNs = median(durations[EventKind::kBackward]);
  out.costs.backwardInputNs = median(durations[EventKind::kBackwardInput]);
  out.costs.backwardWeightNs = median(durations[EventKind::kBackwardWeight]);
  out.costs.transferNs = median(durations[EventKind::kRecv]);
  out.costs.optimizerNs = median(durations[EventKind::kOptimizer]);
  return out;
}

layout::CostModel idealCostsOf(const MeasuredOpCosts& c, int32_t chunks) {
  const double v = std::max(chunks, 1);
  layout::CostModel m;
  m.forward = c.forwardNs > 0 ? c.forwardNs * v : 1e6;
  if (c.backwardNs <= 0 && c.backwardInputNs <= 0) {
    m.backwardInput = m.forward;
  } else if (c.backwardNs > 0) {
    m.backwardInput = c.backwardNs * v;
    m.backwardWeight = 0;
  } else {
    m.backwardInput = c.backwardInputNs * v;
    m.backwardWeight = c.backwardWeightNs * v;
  }
  m.comm = c.transferNs;
  return m;
}

}  // namespace bubblescope::analysis
