// ImportRun: one imported run's life in the store, for every importer. The
// run is begun once (beginRun with its RunInfo), written through an AsyncSink
// (SQLite commits overlap the reading of the next events), and marked
// finished only when every file imported; on any error it is marked failed
// with that error's message, and what was written stays (no half-written
// run is left looking finished). Each file claims one rank; a second file
// with the same rank is refused.
//
// Contract: begin() before sink(); finish() or fail() once at the end. Not
// thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "storage/import/async_sink.h"
#include "storage/trace_writer.h"

namespace bubblescope::import {

class ImportRun {
 public:
  explicit ImportRun(storage::TraceWriter& writer) : writer_(writer) {}

  // Begins the run (once: later calls do nothing) and returns its id.
  Result<int64_t> begin(const storage::RunInfo& info);
  bool begun() const { return sink_ != nullptr; }
  trace_model::Sink& sink() { return *sink_; }
  // Claims `rank` (from `source`, e.g. "file name") for `path`.
  Result<int32_t> claimRank(int64_t rank, const std::string& source, const std::string& path);
  // Waits for the writes and marks the run finished.
  Status finish();
  // Marks a begun run failed with `error`'s message; returns `error`.
  Status fail(const Status& error);

 private:
  storage::TraceWriter& writer_;
  int64_t runId_ = 0;
  std::unique_ptr<AsyncSink> sink_;
  std::map<int32_t, std::string> fileOfRank_;
};

// "import <first file's name>" (+N when more files).
std::string defaultRunName(const std::vector<std::string>& paths);
// The file name of `path`, without its folders.
std::string baseName(const std::string& path);
// The rank a file name states ("rank-3.json.gz", "trace_rank_12.json"), if any.
std::optional<int32_t> rankFromFileName(const std::string& path);

}  // namespace bubblescope::import
