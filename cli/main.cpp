// bubblescope-cli: train, run, report, export, import and bench.
#include <cstdio>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"Bubblescope: run, trace and analyse parallel training", "bubblescope-cli"};
  app.require_subcommand(1);
  bubblescope::cli::CommandRunner runner;
  bubblescope::cli::addInfoCommand(app, runner);
  bubblescope::cli::addBenchCommand(app, runner);
  bubblescope::cli::addReportCommand(app, runner);
  bubblescope::cli::addCompareCommand(app, runner);
  bubblescope::cli::addExportCommand(app, runner);
  bubblescope::cli::addTrainCommand(app, runner);
  bubblescope::cli::addRunCommand(app, runner);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return runner ? runner() : 0;
}
