// importNsys: one run from the Nsight Systems SQLite exports of a job, one
// file per rank (`nsys profile -o report-%q{OMPI_COMM_WORLD_RANK}` then
// `nsys export --type sqlite`), written through a TraceWriter
// (docs/import.md, "Nsight Systems").
//
// Every file is opened and probed before anything is written: a file that
// is not an Nsight export, truncated, locked, damaged or without GPU work
// ends the import with one message naming it and leaves the trace file as it
// was. Ranks: --rank (one file), else MPI_RANKS, an "MPI Rank N" thread name,
// the number that ends the file name, the file's position. World size: the
// number of files or the highest rank + 1, whichever is larger. Times: each
// file's times plus its session start (TARGET_INFO_SESSION_START_TIME, UTC
// ns): ranks of one host share its clock; ranks of several hosts are aligned
// only as well as the hosts' clocks agree, which the export cannot tell, and a
// warning says so; a file without a session start keeps its own times and a
// warning says it could not be aligned. An export schema other than 2.x or
// 3.x imports the tables it has and the summary lists what it skipped.
// Reading errors after the run began mark it failed with the message.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "storage/import/import_summary.h"
#include "storage/trace_writer.h"

namespace bubblescope::import {

Result<ImportSummary> importNsys(storage::TraceWriter& writer,
                                 const std::vector<std::string>& paths,
                                 const ImportOptions& options);

// The rows importNsys reads from one file (CUDA runtime calls, NVTX, kernels,
// memcpy, memset: every row of those tables, their needed columns), read
// with no mapping and no writing: the baseline of `bench import` (a bare
// SQLite scan of the same file). Errors as NsysExport::open's.
Result<int64_t> scanNsysRows(const std::string& path);

}  // namespace bubblescope::import
