// addMpiBench: one MPI benchmark's two subcommands of `bench`: NAME, which
// launches the job (--ranks R, 2..64) and prints its figures, and the hidden
// NAME-rank, one rank of that job started through mpirun. Both share one
// Options object (it needs an int `ranks`); addOptions adds the options
// both take. launchMpiBench starts the job NAME's launcher runs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace bubblescope::cli {

template <class Options>
void addMpiBench(Command bench, CommandRunner& runner, const std::string& name,
                 const std::string& help, const std::string& ranksHelp,
                 void (*addOptions)(Command, Options&), ExitCode (*runBench)(const Options&),
                 ExitCode (*runRank)(const Options&)) {
  auto o = std::make_shared<Options>();
  Command cmd = bench.subcommand(name, help);
  cmd.option("--ranks", o->ranks, ranksHelp).range(2, 64).showDefault();
  addOptions(cmd, *o);
  cmd.callback([&runner, o, runBench] { runner = [o, runBench] { return runBench(*o); }; });
  Command worker = bench.subcommand(name + "-rank", "One rank of `bench " + name + "`");
  worker.hidden();  // hidden: started through mpirun
  addOptions(worker, *o);
  worker.callback([&runner, o, runRank] { runner = [o, runRank] { return runRank(*o); }; });
}

// Runs `mpirun -np ranks <this executable> bench NAME-rank rankArgs...` and
// returns its exit code; a launcher failure is printed and returns 1.
ExitCode launchMpiBench(const std::string& name, int ranks,
                        const std::vector<std::string>& rankArgs);

}  // namespace bubblescope::cli
