// LaunchStats: one rank's CUDA launch statistics with Holistic Trace
// Analysis's definitions (hta/analyzers/cuda_kernel_analysis.py,
// cuda_kernel_launch_stats; docs/analysis.md, "CUDA launches"):
//
// - The launches read: the host calls named cudaLaunchKernel,
//   cudaLaunchKernelExC, cudaMemcpyAsync or cudaMemsetAsync (HTA's default,
//   include_memory_events), each joined to the GPU records of its
//   correlation id.
// - Launch delay: the record's start minus the end of its launch call
//   (start + duration), 0 when negative (HTA clips it): how long the work
//   queued after the call returned. p50 and p95 are nearest-rank
//   percentiles (percentile.h).
// - Shorter than its launch: the record's duration is below its launch
//   call's (HTA's "short GPU kernels", without its 50 µs runtime cutoff):
//   GPU work too small to hide the cost of launching it.
//
// Contract: add() the joined pairs in any order, then finish() once.
// Memory: 8 bytes per pair until finish(). Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "storage/analysis/launch_table.h"

namespace bubblescope::analysis {

// The launch calls HTA's launch statistics read.
bool isHtaLaunchCall(std::string_view name);

struct LaunchStats {
  int64_t launches = 0;  // GPU records joined to such a call
  int64_t delayP50Ns = 0;
  int64_t delayP95Ns = 0;
  int64_t delayMaxNs = 0;
  double delayMeanNs = 0;
  int64_t shorterThanLaunch = 0;
};

class LaunchStatsBuilder {
 public:
  void add(const LaunchCall& call, int64_t recordStartNs, int64_t recordEndNs);
  // Adds the pairs of `other`.
  void merge(LaunchStatsBuilder&& other);
  // nullopt when nothing was added.
  std::optional<LaunchStats> finish();

 private:
  std::vector<int64_t> delays_;
  int64_t shorter_ = 0;
};

}  // namespace bubblescope::analysis
