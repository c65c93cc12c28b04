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
// launch for the step windows, and the NCCL kernels and comm ops). The
// batching, the launch index and the step windows are the importers' shared
// machinery (event_batch.h, launch_index.h, enclosing_spans.h). Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "storage/import/enclosing_spans.h"
#include "storage/import/event_batch.h"
#include "storage/import/import_summary.h"
#include "storage/import/kineto_record.h"
#include "storage/import/launch_index.h"
#include "storage/import/nccl_collective.h"
#include "trace_model/sink.h"

namespace bubblescope::import {

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
  struct PendingNccl {  // an NCCL kernel waiting for its launching ops
    trace_model::Event event;
    KinetoRecord kernel;
  };
  Status addSpan(const KinetoRecord& r, int64_t startNs, int64_t endNs);
  // Describes the NCCL kernels held back and adds them to the batch.
  Status resolveNccl();
  std::vector<const KinetoRecord*> launchersOf(int64_t correlation) const;

  int32_t rank_;
  const GroupDims& groups_;
  trace_model::Sink& sink_;
  EventBatch batch_;
  std::vector<trace_model::StepRecord> cpuSteps_;
  LaunchIndex launches_;
  EnclosingSpans commSpans_;          // the comm ops, by thread
  std::vector<KinetoRecord> commOps_;  // their records, by commSpans_ item
  std::vector<PendingNccl> pendingNccl_;
  int64_t device_ = -1;
  int64_t hostPid_ = 0;
  RankImportStats stats_;
};

}  // namespace bubblescope::import
