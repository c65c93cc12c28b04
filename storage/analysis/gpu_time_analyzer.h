// GpuTimeAnalyzer: where a rank's GPU time went, with Holistic Trace
// Analysis's definitions (docs/formulas.md, "Trace analysis"),
// over the rank's step windows:
//   busy = |∪ GPU records| (kernels, collectives, memcpy, memset on the
//   stream lanes; GPU annotations do not count), compute = |∪ compute
//   kernels| (kind kernel: not communication, not memory), non-compute =
//   busy − compute, idle = steps − busy; comm = |∪ collective kernels|,
//   overlap = |comm ∩ compute| (HTA's get_comm_comp_overlap numerator).
//
// Contract: construct with the rank's windows sorted and disjoint; add() the
// rank's events in start order. Memory is O(windows): unions are merged as
// the events come. Not thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "storage/analysis/rank_step_analyzer.h"
#include "trace_model/event.h"

namespace bubblescope::analysis {

struct GpuTime {
  int64_t windowNs = 0;  // the steps' time
  int64_t busyNs = 0;
  int64_t computeNs = 0;
  int64_t commNs = 0;
  int64_t overlapNs = 0;
  int64_t nonComputeNs() const { return busyNs - computeNs; }
  int64_t idleNs() const { return windowNs - busyNs; }
};

class GpuTimeAnalyzer {
 public:
  explicit GpuTimeAnalyzer(std::vector<trace_model::StepWindow> windows);
  void add(const trace_model::Event& event);
  // nullopt when the rank had no GPU records in its steps.
  std::optional<GpuTime> finish() const;

 private:
  // |∪ intervals| of intervals added in start order.
  struct RunningUnion {
    int64_t totalNs = 0;
    int64_t startNs = 0;
    int64_t endNs = std::numeric_limits<int64_t>::min();
    void add(int64_t s, int64_t e);
    int64_t value() const;
  };
  struct Window {
    RunningUnion busy, compute, comm, commOrCompute;
  };
  std::vector<trace_model::StepWindow> windows_;
  std::vector<Window> unions_;
  size_t first_ = 0;  // windows before it end before the current event
  bool sawGpu_ = false;
};

}  // namespace bubblescope::analysis
