// RankStepAnalyzer: the per-rank, per-step metrics of docs/design.md
// ("Metrics"), computed from one rank's events streamed in start order.
//
// Definitions (C = ∪ compute spans, M = ∪ communication spans, W = ∪ wait
// spans, each clipped to the step window [start, end)):
//   compute = |C|, comm = |M|, overlap = |M ∩ C| (HTA: time computing while
//   communicating), exposed comm = |M \ C|, wait = |W \ (C ∪ M)| (blocked and
//   doing nothing else), idle = step − |C ∪ M ∪ W|; so wait + idle is the
//   time the rank neither computes nor communicates (its bubble).
// Communication is also split by parallel dimension: per dim the union of its
// spans in time, and the summed bytes of the spans that start in the step.
//
// Contract: construct with the rank's step windows sorted by start and
// disjoint; call add() with the rank's events in start order. Memory is
// bounded by the events of the steps still open: a step is finished (and its
// intervals freed) as soon as an event starts at or after its end. Not
// thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "storage/analysis/step_times.h"
#include "trace_model/event.h"
#include "trace_model/interval_set.h"
#include "trace_model/step_window.h"

namespace bubblescope::analysis {

struct RankStepMetrics : StepTimes {
  int32_t rank = 0;
  int32_t step = 0;
  // HTA straggler signal: start of the last collective (not a send/recv)
  // lasting at least 1% of the step; -1 when there is none.
  int64_t lastCollectiveStartNs = -1;
};

class RankStepAnalyzer {
 public:
  RankStepAnalyzer(int32_t rank, std::vector<trace_model::StepWindow> windows);

  void add(const trace_model::Event& event);
  // Metrics of the steps finished so far, in step-window order; moves them out.
  std::vector<RankStepMetrics> takeFinished();
  // Finishes every remaining step and returns what takeFinished() had not.
  std::vector<RankStepMetrics> finish();

 private:
  struct OpenStep {
    std::vector<trace_model::Interval> compute, comm, wait;
    std::array<std::vector<trace_model::Interval>, trace_model::kParallelDimCount> commByDim;
    RankStepMetrics metrics;
    int64_t lastCollectiveStartNs = -1;
  };
  void finishUpTo(size_t end);  // finishes windows [next_, end)

  int32_t rank_;
  std::vector<trace_model::StepWindow> windows_;
  std::vector<OpenStep> open_;  // open_[i] belongs to windows_[i]; empty once finished
  size_t next_ = 0;             // first window not finished
  std::vector<RankStepMetrics> finished_;
};

}  // namespace bubblescope::analysis
