// Each subcommand of bubblescope-cli lives in its own file and registers itself
// here. Contract: a command's callback sets `runner`, which main() calls and
// whose value is the process exit code; commands print one clear message on
// stderr for every error and never call exit().
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace bubblescope::cli {

using ExitCode = int;
using CommandRunner = std::function<ExitCode()>;

void addInfoCommand(CLI::App& app, CommandRunner& runner);
void addBenchCommand(CLI::App& app, CommandRunner& runner);
void addReportCommand(CLI::App& app, CommandRunner& runner);
void addCompareCommand(CLI::App& app, CommandRunner& runner);
void addExportCommand(CLI::App& app, CommandRunner& runner);
void addTrainCommand(CLI::App& app, CommandRunner& runner);
void addRunCommand(CLI::App& app, CommandRunner& runner);
void addCollectCommand(CLI::App& app, CommandRunner& runner);
void addImportCommand(CLI::App& app, CommandRunner& runner);
void addSimulateCommand(CLI::App& app, CommandRunner& runner);
void addCalibrateCommand(CLI::App& app, CommandRunner& runner);
void addPlanCommand(CLI::App& app, CommandRunner& runner);

// The trace collector of a job `run` launches (collect_command.cpp): joins
// the job's MPI_COMM_WORLD as its last process, writes the trace of run
// `runId` into `trace` and marks it finished (or failed). Initialises and
// finalises MPI. `launcher` is `run`'s HOST:PID:TICKS ("": none).
ExitCode runTraceCollector(const std::string& trace, int64_t runId, const std::string& launcher);

// Benchmarks, registered under `bench`.
void addBenchStore(CLI::App& bench, CommandRunner& runner);
void addBenchAnalysis(CLI::App& bench, CommandRunner& runner);
void addBenchTrain(CLI::App& bench, CommandRunner& runner);
void addBenchTracer(CLI::App& bench, CommandRunner& runner);
void addBenchAllreduce(CLI::App& bench, CommandRunner& runner);
void addBenchAlltoall(CLI::App& bench, CommandRunner& runner);
void addBenchImport(CLI::App& bench, CommandRunner& runner);
void addBenchPredict(CLI::App& bench, CommandRunner& runner);

}  // namespace bubblescope::cli
