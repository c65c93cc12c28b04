// LaunchTable: one rank's host calls that launched GPU work (the
// Lane::kCudaApi events with a correlation id, trace_model/event.h), looked
// up by correlation id: how the GPU analyses find a GPU record's launch
// (gpu_time_analyzer.h, gpu_kernel_analyzer.h).
//
// Contract: add() in any order; ids almost always grow with time, so adding
// in start order appends. The first call added with an id is the one found.
// find() sees what was added so far. 32 bytes per launch. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace bubblescope::analysis {

struct LaunchCall {
  int64_t correlation = 0;
  int64_t startNs = 0;
  int64_t endNs = 0;
  // One of the calls HTA's launch statistics read (launch_stats.h).
  bool htaLaunch = false;
};

class LaunchTable {
 public:
  void add(const LaunchCall& call);
  // The launch of `correlation`; nullptr when none was added.
  const LaunchCall* find(int64_t correlation) const;
  size_t size() const { return calls_.size(); }

 private:
  std::vector<LaunchCall> calls_;  // sorted by correlation
};

}  // namespace bubblescope::analysis
