// Export of one run as Kineto (PyTorch profiler) traces: one JSON file per
// rank, `rank-<r>.json` in a folder, which Holistic Trace Analysis's
// TraceAnalysis(trace_dir=folder) loads (docs/import.md).
//
// Each file: "schemaVersion", "deviceProperties" (for a cuda:N rank, with the
// run's GPU name when known), "distributedInfo" {backend (nccl for cuda
// runs, gloo otherwise), rank, world_size}, "traceEvents", and
// "baseTimeNanoseconds": the run's first time rounded down to a second; each
// ts is relative to it (µs with three decimals, exact to the ns). GPU stream lanes become
// "kernel" (collectives with "Collective name", message size in bytes as
// "In/Out msg nelems" of dtype "Byte", and the dimension as "Process Group
// Description"), "gpu_memcpy", "gpu_memset" and "gpu_user_annotation" on
// pid = the device, tid = the stream; the cuda api lane becomes
// "cuda_runtime"; every other lane "cpu_op" on the rank's process, tid = the
// lane. Launch and GPU record share args.correlation and an "ac2g" flow. The
// run's steps become "ProfilerStep#N" annotations, unless the rank already
// has such events (an imported run keeps its own).
//
// Contract: streams rank by rank (TraceReader::visitEvents); memory is
// bounded by one rank's step list. Errors: missing run (kNotFound), a folder
// or file that cannot be written (kIoError).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "storage/trace_reader.h"

namespace bubblescope::analysis {

struct KinetoExportStats {
  std::vector<std::string> files;  // one per rank, in rank order
  int64_t events = 0;
  int64_t bytes = 0;
};

Result<KinetoExportStats> exportKinetoTraces(storage::TraceReader& reader, int64_t runId,
                                             const std::string& outDir);

}  // namespace bubblescope::analysis
