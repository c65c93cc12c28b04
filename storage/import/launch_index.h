// LaunchIndex: one rank's GPU work by its launches, for every importer. The
// host calls that launched GPU work (correlation id, start, thread) and the
// GPU records they launched (correlation id, start, end) give the launch of a
// record (find) and the GPU window of each step: from the first GPU record
// launched inside the step's CPU range to the next step's first record (the
// last step: to its last record's end), as Holistic Trace Analysis assigns
// kernels to iterations; a step that launched nothing keeps its CPU window
// (docs/import.md, "Steps").
//
// Contract: add*() in any order, then seal() once, then find() and
// gpuStepWindows(). 24 bytes per launch and per GPU record. Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "trace_model/event.h"

namespace bubblescope::import {

struct Launch {
  int64_t correlation = 0;
  int64_t startNs = 0;
  int64_t tid = 0;  // the launching thread, as the trace names it
};

class LaunchIndex {
 public:
  void addLaunch(int64_t correlation, int64_t startNs, int64_t tid);
  void addGpuRecord(int64_t correlation, int64_t startNs, int64_t endNs);
  void seal();

  // The launch of `correlation`, nullptr if none (or before seal()).
  const Launch* find(int64_t correlation) const;
  // `cpuSteps` (one rank's, any order) with their GPU windows, sorted by start.
  std::vector<trace_model::StepRecord> gpuStepWindows(
      std::vector<trace_model::StepRecord> cpuSteps) const;

  size_t launches() const { return launches_.size(); }
  size_t gpuRecords() const { return gpuSpans_.size(); }

 private:
  struct GpuSpan {
    int64_t correlation;
    int64_t startNs;
    int64_t endNs;
  };
  std::vector<Launch> launches_;  // by correlation once sealed
  std::vector<GpuSpan> gpuSpans_;
  bool sealed_ = false;
};

}  // namespace bubblescope::import
