// `bubblescope-cli bench NAME`: every benchmark prints `key: value` lines,
// with a baseline measured in the same run.
#include "cli/commands.h"

namespace bubblescope::cli {

void addBenchCommand(CLI::App& app, CommandRunner& runner) {
  CLI::App* bench = app.add_subcommand("bench", "Measure a part of Bubblescope against a baseline");
  bench->require_subcommand(1);
  addBenchStore(*bench, runner);
  addBenchAnalysis(*bench, runner);
  addBenchTrain(*bench, runner);
  addBenchTracer(*bench, runner);
  addBenchAllreduce(*bench, runner);
  addBenchAlltoall(*bench, runner);
  addBenchImport(*bench, runner);
  addBenchPredict(*bench, runner);
}

}  // namespace bubblescope::cli
