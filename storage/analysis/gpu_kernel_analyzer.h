// GpuKernelAnalyzer: one rank's GPU tables from one pass over its events
// (docs/analysis.md, "GPU kernels"): the kernel breakdown by type and name
// (kernel_breakdown.h), the CUDA launch statistics (launch_stats.h) and the
// memory copies by kind (memory_copies.h).
//
// Which records count: the GPU stream records (kernels, collectives,
// memcpy, memset; GPU annotations and other spans on a stream do not) as in
// the GPU time (gpu_time_analyzer.h). With the launch cut (launchCut: the
// run has two or more steps, as for the GPU time) a record whose launch is
// not in the trace (launched before the profiler started) does not count
// and is counted in launchedBeforeProfile instead; the last step's work
// always counts (HTA's include_last_profiler_step=True: these tables do not
// follow --exclude-last-step). A record without a correlation id counts.
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
#include "storage/analysis/launch_stats.h"
#include "storage/analysis/launch_table.h"
#include "storage/analysis/memory_copies.h"
#include "trace_model/event.h"

namespace bubblescope::analysis {

struct GpuKernels {
  KernelBreakdown breakdown;
  std::optional<LaunchStats> launches;  // nullopt: no record joined to an HTA launch call
  std::vector<MemoryCopyKind> copies;   // by kind
  int64_t records = 0;                  // the records counted
  int64_t launchedBeforeProfile = 0;    // records left out: their launch is not in the trace
};

class GpuKernelAnalyzer {
 public:
  explicit GpuKernelAnalyzer(bool launchCut) : launchCut_(launchCut) {}
  void add(const trace_model::Event& event);
  // nullopt when no GPU record counted.
  std::optional<GpuKernels> finish();

 private:
  bool launchCut_;
  LaunchTable launches_;
  KernelBreakdownBuilder breakdown_;
  LaunchStatsBuilder launchStats_;
  MemoryCopiesBuilder copies_;
  int64_t records_ = 0;
  int64_t launchedBeforeProfile_ = 0;
};

}  // namespace bubblescope::analysis
