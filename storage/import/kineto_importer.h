// importKineto: one run from the Kineto (PyTorch profiler) traces of a job,
// one file per rank (.json or .json.gz), written through a TraceWriter.
//
// Ranks: distributedInfo.rank, else a number in the file name ("rank-3",
// "rank_3", "rank3"), else the file's position in the list. World size:
// distributedInfo.world_size, else the number of files. Two files with the
// same rank are refused. Timestamps are the files' ts in ns (exact to the
// nanosecond) plus the file's baseTimeNanoseconds where it has one (HTA:
// unix ns = ts + baseTimeNanoseconds), so ranks with different bases line up.
//
// Options, per-file results and the summary: import_summary.h; the run's
// life (failed, never left looking finished): import_run.h.
//
// Errors: a file that cannot be read, is not JSON, is truncated or is not a
// Kineto trace ends the import with one message naming the file; the run is
// then marked failed with that message, and what was written stays.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "storage/import/import_run.h"
#include "storage/import/import_summary.h"
#include "storage/import/kineto_rank_importer.h"
#include "storage/trace_writer.h"

namespace bubblescope::import {

Result<ImportSummary> importKineto(storage::TraceWriter& writer,
                                   const std::vector<std::string>& paths,
                                   const ImportOptions& options);

}  // namespace bubblescope::import
