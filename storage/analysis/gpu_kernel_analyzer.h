// GpuKernelAnalyzer: one rank's GPU tables from one pass over its events
// (docs/analysis.md, "GPU kernels"): the kernel breakdown by type and name
// (kernel_breakdown.h), the CUDA launch statistics (launch_stats.h) and the
// memory copies by kind (memory_copies.h).
//
// Which records count: the GPU stream records (kernels, collectives,
// memcpy, memset; GPU annotations and other spans on a stream do not) as in
// the GPU time (gpu_time_analyzer.h), and cut as the GPU time is: with the
// launch cut (launchCut: the run has two or more steps) a record whose
// launch is not in the trace (launched before the profiler started) does
// not count and is counted in launchedBeforeProfile instead; without the
// last step (includeLastStep false, `report --exclude-last-step`) a record
// launched in the rank's last ProfilerStep does not count either and is
// counted in afterLastStep (last_step_cut.h: HTA cuts its trace when it
// loads it, so its get_gpu_kernel_breakdown and cuda_kernel_launch_stats
// see the records its temporal breakdown sees). A record without a
// correlation id is judged by its own start.
//
// Contract: add() the rank's events (every lane) in start order, then
// finish() once. A record is joined to a launch that started before it.
// Memory: a LaunchTable (32 bytes per launch) and 16 bytes per GPU record
// until finish(). Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "storage/analysis/kernel_breakdown.h"
#include "storage/analysis/last_step_cut.h"
#include "storage/analysis/launch_stats.h"
#include "storage/analysis/launch_table.h"
#include "storage/analysis/memory_copies.h"
#include "trace_model/event.h"
#include "trace_model/step_window.h"

namespace bubblescope::analysis {

struct GpuKernels {
  KernelBreakdown breakdown;
  std::optional<LaunchStats> launches;  // nullopt: no record joined to an HTA launch call
  std::vector<MemoryCopyKind> copies;   // by kind
  int64_t records = 0;                  // the records counted
  int64_t launchedBeforeProfile = 0;    // records left out: their launch is not in the trace
  int64_t afterLastStep = 0;            // records left out: launched in the last ProfilerStep
  bool launchCut = false;               // whether the launch cut applied
  bool includeLastStep = true;          // HTA's include_last_profiler_step
};

class GpuKernelAnalyzer {
 public:
  // `profilerSteps`: the rank's ProfilerStep spans when known ahead; nullopt
  // reads them from the events (GpuTimeAnalyzer's).
  explicit GpuKernelAnalyzer(
      bool launchCut, bool includeLastStep = true,
      std::optional<std::vector<trace_model::StepWindow>> profilerSteps = std::nullopt);
  void add(const trace_model::Event& event);
  // nullopt when no GPU record counted.
  std::optional<GpuKernels> finish();

 private:
  // The tables of a set of records.
  struct Tables {
    KernelBreakdownBuilder breakdown;
    LaunchStatsBuilder launchStats;
    MemoryCopiesBuilder copies;
    int64_t records = 0;
    void add(const trace_model::Event& e, const LaunchCall* launch);
    void merge(Tables&& later);
  };

  bool launchCut_;
  bool includeLastStep_;
  LastStepCut cut_;
  LaunchTable launches_;
  Tables counted_;
  // Records the cut has not judged yet (launched after every step seen so
  // far): counted if another step begins, left out at the end.
  Tables pending_;
  int64_t launchedBeforeProfile_ = 0;
  int64_t cutRecords_ = 0;  // judged past the cut as they came (steps known ahead)
};

}  // namespace bubblescope::analysis
