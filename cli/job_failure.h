// JobFailure: which rank of an MPI (or Slurm) job failed first, and why,
// read from the job's output as `run` streams it.
//
// Recognised lines (first failure wins; a rank's own message adds the why):
// - a rank's own:  "error: rank 2: <message>"          (train --layout)
// - the collector's: "error: trace collector: <message>" (collect: a full disk)
// - OpenMPI:       "mpirun noticed that process rank 2 with PID 123 on node n
//                   exited on signal 9 (Killed)."
//                  "MPI_ABORT was invoked on rank 2 in communicator ..."
//                  "  Process name: [[52781,1],2]" then "  Exit code: 1"
// - Slurm:         "srun: error: node1: task 2: Killed"
#pragma once

#include <optional>
#include <string>

namespace bubblescope::cli {

class JobFailure {
 public:
  void scan(const std::string& line);
  // One sentence naming the rank ("rank 2 was killed by signal 9 (Killed)";
  // the process numbered `collectorRank` is "the trace collector"), or, when
  // no rank was named, the job's exit code, or the signal (an exit code
  // above 128) that ended mpirun or srun itself.
  std::string message(int exitCode, std::optional<int> collectorRank = std::nullopt) const;

 private:
  void noteRank(int rank, const std::string& why, bool own);
  std::optional<int> rank_;
  std::string why_;           // from mpirun / srun
  std::string own_;           // the rank's own error message
  std::string collectorOwn_;  // "error: trace collector: ..." (collect_command.cpp)
  int processNameRank_ = -1;  // OpenMPI's "Process name:" block, waiting for "Exit code:"
};

}  // namespace bubblescope::cli
