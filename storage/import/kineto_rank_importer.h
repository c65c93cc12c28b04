// KinetoRankImporter: turns the records of one rank's Kineto trace into
// Bubblescope events, steps and the rank's description (docs/import.md).
//
// Mapping: CPU ops and annotations on one host-thread lane per thread
// (nested as found); CUDA runtime and driver calls on Lane::kCudaApi with
// their correlation id; GPU kernels, memcpy, memset and GPU annotations on
// one lane per stream, linked to their launch by the same correlation id
// (the one Kineto's ac2g flows carry); NCCL kernels as communication with
// their collective, bytes, process group and dimension, described by their
// own arguments or, in older traces, by the record_param_comms / nccl:* /
// c10d::* ops that launched them (resolved in finish(): those ops may come
// after the kernels in the file); `ProfilerStep#N` as step N, whose
// window is the GPU time of the work launched in it (HTA assigns GPU
// kernels to iterations the same way), the CPU window when it launched none.
//
// Contract: add() every record, then finish(). Events go to the sink in
// batches as they come (memory bounded by a batch, plus 48 bytes per GPU
// launch for the step windows, and the NCCL kernels and comm ops). Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
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
  int64_t missingTimes = 0;           // events without a usable ts (or past int64 ns): skipped
  int64_t unknownCategoryEvents = 0;  // kept as generic spans
  int64_t unknownCollectives = 0;     // NCCL kernels stored as all-reduce
  int64_t sendRecvAsSend = 0;         // SendRecv kernels nothing else described: kept as send
  // NCCL kernels by where their bytes came from (BytesSource).
  int64_t ncclBytesFromKernel = 0;
  int64_t ncclBytesFromLauncher = 0;
  int64_t ncclBytesFromInputDims = 0;
  int64_t ncclBytesUnknown = 0;  // stored as 0 bytes
  std::map<std::string, int64_t> unknownCategories;
  // NCCL kernels per process group ("Process Group Name", "" when none says).
  struct Group {
    std::string desc;
    std::string ranks;  // "Process Group Ranks" as written, e.g. "[0, 1]"
    int64_t collectives = 0;
    int64_t bytes = 0;
  };
  std::map<std::string, Group> groups;
};

class KinetoRankImporter {
 public:
  // `timeOffsetNs()` is added to every time: the file's baseTimeNanoseconds
  // (HTA: unix ns = ts + baseTimeNanoseconds), 0 without one. It is called
  // once, when the first batch is written (so it may wait for a scan that
  // runs beside the parse); times stay unshifted until then.
  KinetoRankImporter(
      trace_model::Sink& sink, int32_t rank, const GroupDims& groups,
      std::function<int64_t()> timeOffsetNs = [] { return int64_t{0}; });

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
  struct Launch {
    int64_t correlation;
    int64_t startNs;
    int64_t tid;
  };
  struct CommOp {  // a CPU op that may describe the collective it launches
    int64_t tid;
    int64_t startNs;
    int64_t endNs;
    KinetoRecord record;
  };
  struct PendingNccl {  // an NCCL kernel waiting for its launching ops
    trace_model::Event event;
    KinetoRecord kernel;
  };
  Status addSpan(const KinetoRecord& r, int64_t startNs, int64_t endNs);
  Status flushEvents();
  // Describes the NCCL kernels held back and adds them to the batch.
  Status resolveNccl();
  std::vector<const KinetoRecord*> launchersOf(int64_t correlation) const;
  // The launch of `correlation` in `sorted` (by correlation), nullptr if none.
  static const Launch* findLaunch(const std::vector<Launch>& sorted, int64_t correlation);
  trace_model::Lane threadLane(int64_t tid);
  std::vector<trace_model::StepRecord> stepRecords() const;

  trace_model::Sink& sink_;
  int32_t rank_;
  const GroupDims& groups_;
  std::function<int64_t()> timeOffsetNs_;
  std::optional<int64_t> offsetNs_;  // timeOffsetNs_(), once called
  int64_t offsetNs();
  // Shifts the batch by offsetNs(); drops (and counts) events past int64 ns.
  void shiftBatch();
  std::vector<trace_model::Event> batch_;
  std::map<int64_t, int32_t> threadIndex_;  // host tid -> lane index, in order seen
  std::vector<trace_model::StepRecord> cpuSteps_;
  std::vector<Launch> launches_;  // sorted by correlation in finish()
  std::vector<CommOp> commOps_;
  std::vector<PendingNccl> pendingNccl_;
  int64_t maxCommOpNs_ = 0;  // the longest comm op: bounds the search for enclosing ones
  std::vector<GpuSpan> gpuSpans_;
  int64_t device_ = -1;
  int64_t hostPid_ = 0;
  RankImportStats stats_;
};

}  // namespace bubblescope::import
