// `bubblescope-cli import FILE... [--trace OUT.db] [--name NAME]
// [--group NAME=dp|tp|pp|ep|zero]... [--step-range REGEX] [--rank N]`: one
// run from a job's PyTorch profiler (Kineto) traces or Nsight Systems SQLite
// exports, one file per rank, the format read from the files' content
// (storage/import/trace_import.h, docs/import.md).
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "storage/import/nccl_collective.h"
#include "storage/import/nsys_steps.h"
#include "storage/import/trace_import.h"
#include "storage/trace_writer.h"

namespace bubblescope::cli {
namespace {

struct ImportArgs {
  std::vector<std::string> files;
  std::string trace = "imported.db";
  std::string name;
  std::vector<std::string> groups;
  std::string stepRange;
  std::optional<int32_t> rank;
};

Result<std::map<std::string, std::string>> parseGroups(const std::vector<std::string>& groups) {
  std::map<std::string, std::string> out;
  for (const auto& g : groups) {
    const auto eq = g.rfind('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == g.size()) {
      return Status::invalidArgument("--group " + g + ": expected NAME=dp|tp|pp|ep|zero");
    }
    out[g.substr(0, eq)] = g.substr(eq + 1);
  }
  return out;
}

void printProgress(const import::ImportProgress& p) {
  if (!import::showsProgress(p)) return;
  std::fprintf(stderr, "importing %s: %.0f%%\n", p.path->c_str(),
               100.0 * static_cast<double>(p.bytesRead) / static_cast<double>(p.fileBytes));
}

ExitCode runImport(const ImportArgs& a) {
  for (const auto& f : a.files) {
    if (!std::filesystem::exists(f)) {
      std::fprintf(stderr, "error: %s does not exist\n", f.c_str());
      return 1;
    }
  }
  auto groups = parseGroups(a.groups);
  if (groups.isOk()) {
    if (auto dims = import::parseGroupDims(*groups); !dims.isOk()) groups = dims.status();
  }
  if (groups.isOk() && !a.stepRange.empty()) {
    if (auto p = import::StepRangePattern::compile(a.stepRange); !p.isOk()) groups = p.status();
  }
  if (!groups.isOk()) {  // a usage error: nothing opened
    std::fprintf(stderr, "error: %s\n", groups.status().message().c_str());
    return 2;
  }
  auto writer = storage::TraceWriter::open(a.trace);
  if (!writer.isOk()) {
    std::fprintf(stderr, "error: %s\n", writer.status().message().c_str());
    return 1;
  }
  import::ImportOptions options;
  options.runName = a.name;
  options.groups = *groups;
  options.stepRange = a.stepRange;
  options.rank = a.rank;
  options.progress = printProgress;
  auto summary = import::importTraces(**writer, a.files, options);
  if (!summary.isOk()) {
    std::fprintf(stderr, "error: %s\n", summary.status().message().c_str());
    return 1;
  }
  for (const auto& w : summary->warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  std::printf("format: %s\n", summary->format.c_str());
  std::printf("run_id: %lld\n", static_cast<long long>(summary->runId));
  std::printf("world_size: %d\n", summary->worldSize);
  for (const auto& f : summary->files) {
    const auto& s = f.stats;
    std::printf(
        "rank %d (%s) %s%s%s: %lld events, %lld kernels, %lld nccl, %lld memcpy, %lld memset, "
        "%lld cuda api, %lld cpu, %lld steps\n",
        f.rank, f.rankSource.c_str(), f.device.c_str(), f.gpuName.empty() ? "" : " ",
        f.gpuName.c_str(), static_cast<long long>(s.events), static_cast<long long>(s.kernels),
        static_cast<long long>(s.ncclKernels), static_cast<long long>(s.memcpys),
        static_cast<long long>(s.memsets), static_cast<long long>(s.runtimeCalls),
        static_cast<long long>(s.cpuOps), static_cast<long long>(s.steps));
    if (!f.clock.empty()) std::printf("  clock: %s\n", f.clock.c_str());
    for (const auto& [name, g] : s.groups) {
      std::printf("  group %s%s%s%s%s: %lld collectives, %lld bytes\n",
                  name.empty() ? "(unnamed)" : name.c_str(), g.desc.empty() ? "" : " ",
                  g.desc.c_str(), g.ranks.empty() ? "" : " ranks ", g.ranks.c_str(),
                  static_cast<long long>(g.collectives), static_cast<long long>(g.bytes));
    }
  }
  std::printf("events: %lld\ntrace: %s\n", static_cast<long long>(summary->events),
              a.trace.c_str());
  return 0;
}

}  // namespace

void addImportCommand(Command app, CommandRunner& runner) {
  Command cmd = app.subcommand(
      "import",
      "Import PyTorch profiler (Kineto) traces or Nsight Systems SQLite exports, one file per "
      "rank, as one run");
  auto a = std::make_shared<ImportArgs>();
  cmd.option("files", a->files,
             "Kineto traces (.json, .json.gz) or Nsight Systems exports (.sqlite), one per rank")
      .required();
  cmd.option("--trace", a->trace, "Trace file to append the run to").showDefault();
  cmd.option("--name", a->name, "Run name (default: import <first file>)");
  cmd.option("--group", a->groups,
             "Parallel dimension of a process group (name or description): NAME=dp|tp|pp|ep|zero");
  cmd.option("--step-range", a->stepRange,
             "Nsight: the NVTX ranges that are steps (regex, whole name; default: "
             "ProfilerStep#N, iteration N, step N)");
  cmd.option("--rank", a->rank, "Nsight: the rank of the one file imported").range(0, 1 << 24);
  cmd.callback([&runner, a] { runner = [a] { return runImport(*a); }; });
}

}  // namespace bubblescope::cli
