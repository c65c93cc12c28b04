// addMpiBench: one MPI benchmark's two subcommands of `bench`: NAME, which
// launches the job (--ranks R, 2..64) and prints its figures, and the hidden
// NAME-rank, one rank of that job started through mpirun. Both share one
// Options object (it needs an int `ranks`); addOptions adds the options
// both take. launchMpiBench starts the job NAME's launcher runs.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace bubblescope::cli {

template <class Options>
void addMpiBench(CLI::App& bench, CommandRunner& runner, const std::string& name,
                 const std::string& help, const std::string& ranksHelp,
                 void (*addOptions)(CLI::App*, Options&), ExitCode (*runBench)(const Options&),
                 ExitCode (*runRank)(const Options&)) {
  auto o = std::make_shared<Options>();
  auto* cmd = bench.add_subcommand(name, help);
  cmd->add_option("--ranks", o->ranks, ranksHelp)->check(CLI::Range(2, 64))->capture_default_str();
  addOptions(cmd, *o);
  cmd->callback([&runner, o, runBench] { runner = [o, runBench] { return runBench(*o); }; });
  auto* worker = bench.add_subcommand(name + "-rank", "One rank of `bench " + name + "`");
  worker->group("");  // hidden: started through mpirun
  addOptions(worker, *o);
  worker->callback([&runner, o, runRank] { runner = [o, runRank] { return runRank(*o); }; });
}

// Runs `mpirun -np ranks <this executable> bench NAME-rank rankArgs...` and
// returns its exit code; a launcher failure is printed and returns 1.
ExitCode launchMpiBench(const std::string& name, int ranks,
                        const std::vector<std::string>& rankArgs);

}  // namespace bubblescope::cli
