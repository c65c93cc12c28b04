// NsysRankReader: one Nsight Systems export as one rank of a run
// (docs/import.md, "Nsight Systems"). probe() learns, without writing
// anything, which process of the file is the rank (the one with the most GPU
// records), its rank, device, host and session start, and refuses a file
// with no GPU work; read() then writes the process's CUDA runtime calls,
// NVTX ranges, kernels, memcpy and memset through an EventBatch, the steps
// and the rank's description.
//
// Mapping: runtime calls on Lane::kCudaApi with their correlation id (the
// launch arrow to the GPU record of the same id); kernels, memcpy and memset
// on the lane of their stream; NCCL kernels as collectives (nccl_collective.h)
// described by the NVTX ranges around their launch; NVTX push/pop and
// start/end ranges on the lane of their thread, nested per thread; steps
// from the NVTX ranges StepRangePattern matches (the outermost of nested
// matches), their windows from the GPU work they launched (LaunchIndex).
//
// Contract: probe(), then read() once with its result (the file may be
// opened again in between: the probe is plain values). Memory: a batch of events, 24 bytes per
// launch and GPU record, the NVTX ranges that may describe a collective.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "storage/import/import_summary.h"
#include "storage/import/nccl_collective.h"
#include "storage/import/nsys_export.h"
#include "storage/import/nsys_steps.h"
#include "trace_model/sink.h"

namespace bubblescope::import {

struct NsysProbe {
  int64_t processKey = 0;  // globalPid >> 24 (the VM and pid bits), 0 when not stated
  int64_t pid = 0;
  int64_t gpuRecords = 0;
  std::vector<std::string> otherProcesses;  // "pid N: M GPU records", skipped
  int64_t device = -1;
  std::vector<int64_t> otherDevices;
  std::string gpuName;
  std::string host;
  std::optional<int64_t> sessionStartNs;  // UTC ns (TARGET_INFO_SESSION_START_TIME)
  std::string sessionStartText;           // its utcTime column
  std::optional<int32_t> rank;            // from the file
  std::string rankSource;                 // "MPI_RANKS", "NVTX thread name", "thread name"
  int64_t captureEndNs = 0;               // the last time the file records
  int64_t rows = 0;                       // about the rows read() steps through
  std::vector<std::string> skipped;       // tables or columns not imported, and why
};

class NsysRankReader {
 public:
  NsysRankReader(NsysExport& file, const GroupDims& groups, const StepRangePattern& steps)
      : file_(file), groups_(groups), steps_(steps) {}

  Result<NsysProbe> probe();
  // Writes the rank's events (times + offsetNs), steps and description;
  // `progress` (may be empty) gets the rows read so far about every 64k.
  // `probe`: what probe() said of this file.
  Status read(trace_model::Sink& sink, const NsysProbe& probe, int32_t rank, int64_t offsetNs,
              int64_t clockOffsetNs, const std::function<void(int64_t rows)>& progress);

  const RankImportStats& stats() const { return stats_; }
  // One line each: unterminated or crossing NVTX ranges, NCCL without sizes...
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  NsysExport& file_;
  const GroupDims& groups_;
  const StepRangePattern& steps_;
  RankImportStats stats_;
  std::vector<std::string> notes_;
};

// The rank a Nsight report's file name states: "rank N" as rankFromFileName,
// else the number that ends its name ("report-3.sqlite", "report.12.sqlite").
std::optional<int32_t> rankFromNsysFileName(const std::string& path);

}  // namespace bubblescope::import
