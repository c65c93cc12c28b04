#include "cli/mpi_bench_command.h"

#include <cstdio>

#include "cli/mpirun.h"

namespace bubblescope::cli {

ExitCode launchMpiBench(const std::string& name, int ranks,
                        const std::vector<std::string>& rankArgs) {
  auto mpirun = findMpirun();
  if (!mpirun.isOk()) {
    std::fprintf(stderr, "error: %s\n", mpirun.status().message().c_str());
    return 1;
  }
  MpirunRequest request;
  request.ranks = ranks;
  request.program = {selfExecutable(), "bench", name + "-rank"};
  request.program.insert(request.program.end(), rankArgs.begin(), rankArgs.end());
  auto rc = runChild(mpirunCommand(*mpirun, request));
  if (!rc.isOk()) {
    std::fprintf(stderr, "error: %s\n", rc.status().message().c_str());
    return 1;
  }
  return *rc;
}

}  // namespace bubblescope::cli
