// Starting MPI jobs: the mpirun (or, under Slurm, srun) command line this
// machine needs, and a child process whose output streams through.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/result.h"

namespace bubblescope::cli {

struct MpirunRequest {
  int ranks = 1;
  std::vector<std::string> hosts;    // empty: this machine
  std::string hostfile;              // empty: none
  std::vector<std::string> program;  // argv of each rank
};

// The path of mpirun, or a clear error when it is missing.
Result<std::string> findMpirun();
// The path of srun, or a clear error when it is missing.
Result<std::string> findSrun();
// True inside a Slurm allocation (SLURM_JOB_ID is set): jobs start with srun.
bool underSlurm();

// mpirun's argv: as root it adds --allow-run-as-root; with more ranks than
// cores (on one host) --oversubscribe; hosts and hostfile pass through.
std::vector<std::string> mpirunCommand(const std::string& mpirun, const MpirunRequest& request);

// srun's argv: one task per rank, and the whole step killed when a task
// fails (--kill-on-bad-exit), as mpirun does by default.
std::vector<std::string> srunCommand(const std::string& srun, int ranks,
                                     const std::vector<std::string>& program);

// Runs argv[0] with argv, inheriting stdout and stderr; returns its exit
// code (128 + signal when a signal ended it).
Result<int> runChild(const std::vector<std::string>& argv);

// Runs argv[0] with argv; its stdout and stderr are copied line by line to
// this process's stdout and stderr as they come, and each line (without its
// newline) is handed to onLine(line, fromStderr) first. Returns the exit
// code (128 + signal when a signal ended it).
using LineHandler = std::function<void(const std::string& line, bool fromStderr)>;
Result<int> runChildStreaming(const std::vector<std::string>& argv, const LineHandler& onLine);

// The running executable, to start more ranks of itself.
std::string selfExecutable();

}  // namespace bubblescope::cli
