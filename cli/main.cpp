// bubblescope-cli: train, run, simulate, report, export, import and bench.
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
  bubblescope::cli::addCollectCommand(app, runner);
  bubblescope::cli::addImportCommand(app, runner);
  bubblescope::cli::addSimulateCommand(app, runner);
  bubblescope::cli::addCalibrateCommand(app, runner);
  bubblescope::cli::addPlanCommand(app, runner);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every usage error prints CLI11's message
    // and exits 2, the code of a mistake in the user's input.
    const int printed = app.exit(e);
    return printed == 0 ? 0 : 2;
  }
  return runner ? runner() : 0;
}
