// Starting MPI jobs: the mpirun command line this machine needs, and a child
// process whose output streams through.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace bubblescope::cli {

struct MpirunRequest {
  int ranks = 1;
  std::vector<std::string> hosts;  // empty: this machine
  std::string hostfile;            // empty: none
  std::vector<std::string> program;  // argv of each rank
};

// The path of mpirun, or a clear error when it is missing.
Result<std::string> findMpirun();

// mpirun's argv: as root it adds --allow-run-as-root; with more ranks than
// cores (on one host) --oversubscribe; hosts and hostfile pass through.
std::vector<std::string> mpirunCommand(const std::string& mpirun, const MpirunRequest& request);

// Runs argv[0] with argv, inheriting stdout and stderr; returns its exit
// code (128 + signal when a signal ended it).
Result<int> runChild(const std::vector<std::string>& argv);

// The running executable, to start more ranks of itself.
std::string selfExecutable();

}  // namespace bubblescope::cli
