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
// Errors: a file that cannot be read, is not JSON, is truncated or is not a
// Kineto trace ends the import with one message naming the file; the run is
// then marked failed with that message, and what was written stays.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "storage/import/kineto_rank_importer.h"
#include "storage/trace_writer.h"

namespace bubblescope::import {

struct ImportProgress {
  size_t fileIndex = 0;
  size_t fileCount = 0;
  const std::string* path = nullptr;
  int64_t bytesRead = 0;  // of this file (compressed bytes for .gz)
  int64_t fileBytes = 0;
};

struct ImportOptions {
  std::string runName;                        // default: "import <first file>"
  std::map<std::string, std::string> groups;  // process group name -> dp|tp|pp|ep|zero
  // Called about every 64k records and at each file's end.
  std::function<void(const ImportProgress&)> progress;
};

struct ImportedFile {
  std::string path;
  int32_t rank = 0;
  std::string rankSource;             // "distributedInfo", "file name" or "order"
  std::string device;                 // "cuda:N" or "cpu"
  std::string gpuName;                // deviceProperties, "" if none
  std::optional<int64_t> baseTimeNs;  // added to the file's ts
  RankImportStats stats;
};

struct ImportSummary {
  int64_t runId = 0;
  int32_t worldSize = 0;
  std::vector<ImportedFile> files;
  std::vector<std::string> warnings;  // stated fallbacks and odd events, one line each
  int64_t events = 0;
};

Result<ImportSummary> importKineto(storage::TraceWriter& writer,
                                   const std::vector<std::string>& paths,
                                   const ImportOptions& options);

// The rank a file name states ("rank-3.json.gz", "trace_rank_12.json"), if any.
std::optional<int32_t> rankFromFileName(const std::string& path);

}  // namespace bubblescope::import
