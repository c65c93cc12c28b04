// Each subcommand of bubblescope-cli lives in its own file and registers itself
// here. Contract: a command's callback returns the process exit code; it
// prints one clear message on stderr for every error and never calls exit().
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace bubblescope::cli {

// Set by a subcommand's callback; main() returns it.
using ExitCode = int;
using CommandRunner = std::function<ExitCode()>;

// Registration functions, one per file (cli/<name>_command.cpp).
void addDemoCommand(CLI::App& app, CommandRunner& runner);
void addInfoCommand(CLI::App& app, CommandRunner& runner);
void addBenchCommand(CLI::App& app, CommandRunner& runner);

}  // namespace bubblescope::cli
