// `bubblescope-cli bench NAME`: every benchmark prints `key: value` lines,
// with a baseline measured in the same run.
#include "cli/commands.h"

namespace bubblescope::cli {

void addBenchCommand(Command app, CommandRunner& runner) {
  Command bench = app.subcommand("bench", "Measure a part of Bubblescope against a baseline");
  bench.requireSubcommand();
  addBenchStore(bench, runner);
  addBenchAnalysis(bench, runner);
  addBenchTrain(bench, runner);
  addBenchTracer(bench, runner);
  addBenchAllreduce(bench, runner);
  addBenchAlltoall(bench, runner);
  addBenchImport(bench, runner);
  addBenchPredict(bench, runner);
  addBenchAdvice(bench, runner);
  addBenchCluster(bench, runner);
}

}  // namespace bubblescope::cli
