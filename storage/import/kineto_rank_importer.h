// KinetoRankImporter: turns the records of one rank's Kineto trace into
// Bubblescope events, steps and the rank's description (docs/import.md).
//
// Mapping: CPU ops and annotations on one host-thread lane per thread
// (nested as found); CUDA runtime and driver calls on Lane::kCudaApi with
// their correlation id; GPU kernels, memcpy, memset and GPU annotations on
// one lane per stream, linked to their launch by the same correlation id
// (the one Kineto's ac2g flows carry); NCCL kernels as communication with
// their collective, bytes and dimension; `ProfilerStep#N` as step N, whose
// window is the GPU time of the work launched in it (HTA assigns GPU
// kernels to iterations the same way), the CPU window when it launched none.
//
// Contract: add() every record, then finish(). Events go to the sink in
// batches as they come (memory bounded by a batch, plus 40 bytes per GPU
// launch for the step windows). Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/result.h"
#include "storage/import/kineto_record.h"
#include "storage/import/nccl_collective.h"
#include "trace_model/sink.h"

namespace bubblescope::import {

// What one file held, for the summary and the warnings.
struct RankImportStats {
  int64_t events = 0;
  int64_t kernels = 0;
  int64_t ncclKernels = 0;
  int64_t memcpys = 0;
  int64_t memsets = 0;
  int64_t runtimeCalls = 0;
  int64_t cpuOps = 0;
  int64_t flows = 0;
  int64_t steps = 0;
  int64_t negativeDurations = 0;      // kept as zero-length spans
  int64_t missingTimes = 0;           // events without ts: skipped
  int64_t unknownCategoryEvents = 0;  // kept as generic spans
  int64_t unknownCollectives = 0;     // NCCL kernels stored as all-reduce
  std::map<std::string, int64_t> unknownCategories;
};

class KinetoRankImporter {
 public:
  KinetoRankImporter(trace_model::Sink& sink, int32_t rank, const GroupDims& groups);

  Status add(const KinetoRecord& record);
  // Flushes the events, writes the steps and the rank.
  Status finish(const KinetoHeader& header);

  const RankImportStats& stats() const { return stats_; }
  // "cuda:N" from the GPU records, "cpu" without any.
  std::string device() const;

 private:
  struct GpuSpan {
    int64_t correlation;
    int64_t startNs;
    int64_t endNs;
  };
  Status addSpan(const KinetoRecord& r, int64_t startNs, int64_t endNs);
  Status flushEvents();
  trace_model::Lane threadLane(int64_t tid);
  std::vector<trace_model::StepRecord> stepRecords() const;

  trace_model::Sink& sink_;
  int32_t rank_;
  const GroupDims& groups_;
  std::vector<trace_model::Event> batch_;
  std::map<int64_t, int32_t> threadIndex_;  // host tid -> lane index, in order seen
  std::vector<trace_model::StepRecord> cpuSteps_;
  std::vector<std::pair<int64_t, int64_t>> launches_;  // (correlation, start ns)
  std::vector<GpuSpan> gpuSpans_;
  int64_t device_ = -1;
  int64_t hostPid_ = 0;
  RankImportStats stats_;
};

}  // namespace bubblescope::import
