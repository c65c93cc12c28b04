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
// - The writer stays open (idle, no transaction) for the whole job, and a
//   reserve of kReserveBytes beside the trace file (T.reserve,
//   storage/space_reserve.h) holds back the space end() needs when the disk
//   fills up during the job; end() hands it back when its write fails for
//   want of space and tries once more. The reserve goes when the
//   LaunchedRun does (a launcher killed with SIGKILL leaves it; the next
//   run's begin() replaces it).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/result.h"
#include "storage/run_info.h"
#include "storage/space_reserve.h"
#include "storage/trace_writer.h"

namespace bubblescope::cli {

class LaunchedRun {
 public:
  static Result<LaunchedRun> begin(const std::string& tracePath, const storage::RunInfo& info);

  static constexpr int64_t kReserveBytes = 256 * 1024;

  int64_t id() const { return id_; }
  bool end(storage::RunStatus status, const std::string& message);

 private:
  LaunchedRun(std::unique_ptr<storage::TraceWriter> writer, int64_t id,
              storage::SpaceReserve reserve)
      : writer_(std::move(writer)), id_(id), reserve_(std::move(reserve)) {}
  std::unique_ptr<storage::TraceWriter> writer_;
  int64_t id_ = -1;
  storage::SpaceReserve reserve_;
};

}  // namespace bubblescope::cli
