// bubblescope-cli: train, run, simulate, report, export, import and bench.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"

int main(int argc, char** argv) {
  using namespace bubblescope::cli;
  CLI::App app{"Bubblescope: run, trace and analyse parallel training", "bubblescope-cli"};
  app.require_subcommand(1);
  CommandRunner runner;
  Command top(&app);
  addInfoCommand(top, runner);
  addBenchCommand(top, runner);
  addReportCommand(top, runner);
  addCompareCommand(top, runner);
  addExportCommand(top, runner);
  addTrainCommand(top, runner);
  addRunCommand(top, runner);
  addCollectCommand(top, runner);
  addImportCommand(top, runner);
  addSimulateCommand(top, runner);
  addCalibrateCommand(top, runner);
  addPlanCommand(top, runner);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every usage error is one line, "error:
    // " and CLI11's (or command_line.h's range) message, and exits 2, the
    // code of a mistake in the user's input.
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "error: %s (see --help)\n", e.what());
    return 2;
  }
  return runner ? runner() : 0;
}
