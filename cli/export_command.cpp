// `bubblescope-cli export FILE --run ID --format chrome OUT.json`: one run
// in the Chrome trace event format (Perfetto, chrome://tracing);
// `--format kineto OUT_DIR`: one Kineto (PyTorch profiler) JSON per rank,
// OUT_DIR/rank-N.json, which Holistic Trace Analysis loads (docs/import.md).
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "storage/analysis/chrome_export.h"
#include "storage/analysis/kineto_export.h"
#include "storage/trace_reader.h"

namespace bubblescope::cli {
namespace {

struct ExportOptions {
  std::string path;
  int64_t runId = 0;
  std::string format;
  std::string out;
};

ExitCode runExport(const ExportOptions& o) {
  auto reader = storage::TraceReader::open(o.path);
  if (!reader.isOk()) {
    std::fprintf(stderr, "error: %s\n", reader.status().message().c_str());
    return 1;
  }
  if (o.format == "kineto") {
    auto kineto = analysis::exportKinetoTraces(**reader, o.runId, o.out);
    if (!kineto.isOk()) {
      std::fprintf(stderr, "error: %s\n", kineto.status().message().c_str());
      return 1;
    }
    std::printf("wrote %s: %zu rank files, %lld events, %.1f MB\n", o.out.c_str(),
                kineto->files.size(), static_cast<long long>(kineto->events), kineto->bytes / 1e6);
    return 0;
  }
  auto stats = analysis::exportChromeTrace(**reader, o.runId, o.out);
  if (!stats.isOk()) {
    std::fprintf(stderr, "error: %s\n", stats.status().message().c_str());
    return 1;
  }
  std::printf(
      "wrote %s: %lld events, %lld send/receive flows, %lld launch flows, %.1f MB (at most %lld "
      "flow ends waiting for their partner)\n",
      o.out.c_str(), static_cast<long long>(stats->events), static_cast<long long>(stats->flows),
      static_cast<long long>(stats->launchFlows), stats->bytes / 1e6,
      static_cast<long long>(stats->peakWaitingFlowEnds));
  return 0;
}

}  // namespace

void addExportCommand(Command app, CommandRunner& runner) {
  Command cmd = app.subcommand("export", "Write a run in another trace format");
  auto o = std::make_shared<ExportOptions>();
  cmd.option("file", o->path, "Trace file (.db)").required();
  cmd.option("out", o->out, "Output file (chrome: trace.json) or folder (kineto)").required();
  cmd.option("--run", o->runId, "Run id").required().positive();
  cmd.option("--format", o->format, "Output format").required().oneOf({"chrome", "kineto"});
  cmd.callback([&runner, o] { runner = [o] { return runExport(*o); }; });
}

}  // namespace bubblescope::cli
