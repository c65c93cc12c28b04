// LaunchedRun: a run's life in the trace file as `run` owns it.
//
// Contract:
// - begin() opens the trace file once, begins the run (status running) from
//   its description, and commits it before any rank starts: the run and its
//   id exist from then on. The launcher hands the id to the ranks (--run-id);
//   rank 0 attaches to the run and writes its events and, when it can, its
//   own end (finished, or failed naming itself).
// - end() is the launcher's ending, for the ends rank 0 cannot write: a rank
//   killed or hung (failed), a stop signal (stopped). A run that rank 0 has
//   already ended keeps its status; end() then returns false.
// - The writer stays open (idle, no transaction) for the whole job.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/result.h"
#include "storage/run_info.h"
#include "storage/trace_writer.h"

namespace bubblescope::cli {

class LaunchedRun {
 public:
  static Result<LaunchedRun> begin(const std::string& tracePath, const storage::RunInfo& info);

  int64_t id() const { return id_; }
  bool end(storage::RunStatus status, const std::string& message);

 private:
  LaunchedRun(std::unique_ptr<storage::TraceWriter> writer, int64_t id)
      : writer_(std::move(writer)), id_(id) {}
  std::unique_ptr<storage::TraceWriter> writer_;
  int64_t id_ = -1;
};

}  // namespace bubblescope::cli
