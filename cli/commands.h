// Each subcommand of bubblescope-cli lives in its own file and registers itself
// here. Contract: a command's callback sets `runner`, which main() calls and
// whose value is the process exit code; commands print one clear message on
// stderr for every error and never call exit().
#pragma once

#include <functional>

#include "cli/command_line.h"

namespace bubblescope::cli {

using ExitCode = int;
using CommandRunner = std::function<ExitCode()>;

void addInfoCommand(Command app, CommandRunner& runner);
void addBenchCommand(Command app, CommandRunner& runner);
void addReportCommand(Command app, CommandRunner& runner);
void addCompareCommand(Command app, CommandRunner& runner);
void addExportCommand(Command app, CommandRunner& runner);
void addTrainCommand(Command app, CommandRunner& runner);
void addRunCommand(Command app, CommandRunner& runner);
void addCollectCommand(Command app, CommandRunner& runner);
void addImportCommand(Command app, CommandRunner& runner);
void addSimulateCommand(Command app, CommandRunner& runner);
void addCalibrateCommand(Command app, CommandRunner& runner);
void addPlanCommand(Command app, CommandRunner& runner);

// The trace collector of a job `run` launches (collect_command.cpp): joins
// the job's MPI_COMM_WORLD as its last process, writes the trace of run
// `runId` into `trace` and marks it finished (or failed). Initialises and
// finalises MPI. `launcher` is `run`'s HOST:PID:TICKS ("": none).
ExitCode runTraceCollector(const std::string& trace, int64_t runId, const std::string& launcher);

// Benchmarks, registered under `bench`.
void addBenchStore(Command bench, CommandRunner& runner);
void addBenchAnalysis(Command bench, CommandRunner& runner);
void addBenchTrain(Command bench, CommandRunner& runner);
void addBenchTracer(Command bench, CommandRunner& runner);
void addBenchAllreduce(Command bench, CommandRunner& runner);
void addBenchAlltoall(Command bench, CommandRunner& runner);
void addBenchImport(Command bench, CommandRunner& runner);
void addBenchPredict(Command bench, CommandRunner& runner);
void addBenchAdvice(Command bench, CommandRunner& runner);
void addBenchCluster(Command bench, CommandRunner& runner);

}  // namespace bubblescope::cli
