// importTraces: one run from a job's trace files, whatever profiler wrote
// them: the format is read from each file's first bytes, never its name.
// "SQLite format 3" opens an Nsight Systems export (importNsys); anything
// else is a Kineto JSON trace, plain or gzip (importKineto), which says
// what is wrong with a file that is neither. All files of one import must
// be of one format.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "storage/import/import_summary.h"
#include "storage/trace_writer.h"

namespace bubblescope::import {

enum class TraceFormat { kKineto, kNsysSqlite };

// The format of `path` from its first 16 bytes; an error when it cannot be read.
Result<TraceFormat> detectTraceFormat(const std::string& path);
const char* toString(TraceFormat format);

Result<ImportSummary> importTraces(storage::TraceWriter& writer,
                                   const std::vector<std::string>& paths,
                                   const ImportOptions& options);

}  // namespace bubblescope::import
