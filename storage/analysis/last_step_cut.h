// LastStepCut: Holistic Trace Analysis's include_last_profiler_step=False
// (hta/common/trace.py _filter_irrelevant_gpu_kernels) for one rank, decided
// as its events stream in start order. HTA cuts the trace when it loads it,
// so every analysis of it (temporal breakdown, kernel breakdown, launch
// statistics) sees the same records: `report`'s GPU time
// (gpu_time_analyzer.h) and GPU kernel tables (gpu_kernel_analyzer.h) both
// judge their records here.
//
// A GPU record is judged by its launch's start, or by its own start when it
// has no correlation id (HTA treats it as a host row). With the last step
// every record is kept; without, a record is kept when that time is before
// the rank's last ProfilerStep started. The steps are given ahead (runs
// whose stored steps are the host's step spans) or read from the events
// ("ProfilerStep#N" annotations on host-thread lanes, a Kineto import): then
// a record judged at or after the latest step seen so far is pending, until
// a later step begins (which keeps everything pending: it starts after every
// record seen so far, so after their launches) or the events end (which cuts
// it).
//
// Contract: call step() with every event of the rank, in start order, before
// judging it. Not thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "trace_model/event.h"
#include "trace_model/step_window.h"

namespace bubblescope::analysis {

class LastStepCut {
 public:
  enum class Verdict { kKept, kPending, kCut };

  // `profilerSteps`: the rank's ProfilerStep spans when known ahead; nullopt
  // reads them from the events.
  LastStepCut(bool includeLastStep,
              std::optional<std::vector<trace_model::StepWindow>> profilerSteps);
  // True when `e` begins a ProfilerStep read from the events: everything
  // pending is kept from then on.
  bool step(const trace_model::Event& e);
  // The verdict on a GPU record starting at recordStartNs whose launch (if
  // found) started at launchNs.
  Verdict judge(std::optional<int64_t> launchNs, int64_t recordStartNs) const;
  // The ProfilerSteps seen (or given) so far.
  int32_t steps() const { return steps_; }
  bool includeLastStep() const { return includeLastStep_; }

 private:
  void addStep(int64_t startNs);

  bool includeLastStep_;
  bool stepsFromEvents_;
  int32_t steps_ = 0;
  int64_t lastStepStartNs_ = std::numeric_limits<int64_t>::min();
};

// The GPU records a report's GPU tables cover, in words, for their headings:
// "every GPU record (fewer than two ProfilerSteps: no launch cut)", "the work
// launched in the trace, last ProfilerStep included", "the work launched
// before the last ProfilerStep".
std::string coveredGpuRecords(bool launchCut, bool includeLastStep);

}  // namespace bubblescope::analysis
