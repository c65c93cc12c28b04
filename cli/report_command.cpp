// `bubblescope-cli report FILE [--run ID] [--json | --markdown]`: where the
// time went, per rank, stage and parallel dimension (storage/analysis).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "storage/analysis/report_json.h"
#include "storage/analysis/report_text.h"
#include "storage/analysis/run_analyzer.h"
#include "storage/trace_reader.h"

namespace bubblescope::cli {
namespace {

struct ReportOptions {
  std::string path;
  int64_t runId = -1;  // -1: every run of the file
  bool json = false;
  bool markdown = false;
};

Result<std::vector<analysis::RunReport>> analyzeRuns(const ReportOptions& o) {
  BS_ASSIGN_OR_RETURN(auto reader, storage::TraceReader::open(o.path));
  std::vector<int64_t> ids;
  if (o.runId >= 0) {
    ids.push_back(o.runId);
  } else {
    BS_ASSIGN_OR_RETURN(auto runs, reader->runs());
    for (const auto& r : runs) ids.push_back(r.id);
  }
  std::vector<analysis::RunReport> reports;
  for (int64_t id : ids) {
    BS_ASSIGN_OR_RETURN(auto report, analysis::analyzeRun(*reader, id));
    reports.push_back(std::move(report));
  }
  return reports;
}

ExitCode runReport(const ReportOptions& o) {
  auto reports = analyzeRuns(o);
  if (!reports.isOk()) {
    std::fprintf(stderr, "error: %s\n", reports.status().message().c_str());
    return 1;
  }
  if (o.json) {
    std::printf("%s\n", analysis::reportToJson(*reports).dump(2).c_str());
    return 0;
  }
  if (reports->empty()) std::printf("%s holds no runs\n", o.path.c_str());
  for (size_t i = 0; i < reports->size(); ++i) {
    if (i > 0) std::printf("\n");
    std::fputs(analysis::reportToText((*reports)[i], o.markdown).c_str(), stdout);
  }
  return 0;
}

}  // namespace

void addReportCommand(CLI::App& app, CommandRunner& runner) {
  auto* cmd = app.add_subcommand("report", "Where the time went: per rank, stage and dimension");
  auto o = std::make_shared<ReportOptions>();
  cmd->add_option("file", o->path, "Trace file (.db)")->required();
  cmd->add_option("--run", o->runId, "Run id (default: every run)")->check(CLI::NonNegativeNumber);
  auto* json = cmd->add_flag("--json", o->json, "One JSON object (docs/report-format.md)");
  cmd->add_flag("--markdown", o->markdown, "Markdown tables")->excludes(json);
  cmd->callback([&runner, o] { runner = [o] { return runReport(*o); }; });
}

}  // namespace bubblescope::cli
