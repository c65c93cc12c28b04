// `bubblescope-cli compare FILE --run A --run B [--markdown]`: two runs'
// layouts and metrics side by side, with the change of each.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "storage/analysis/run_analyzer.h"
#include "storage/analysis/run_comparison.h"
#include "storage/analysis/text_table.h"
#include "storage/trace_reader.h"

namespace bubblescope::cli {
namespace {

struct CompareOptions {
  std::string path;
  std::vector<int64_t> runs;
  bool markdown = false;
};

Result<std::string> compare(const CompareOptions& o) {
  if (o.runs.size() != 2) {
    return Status::invalidArgument("compare needs exactly two runs (--run A --run B), got " +
                                   std::to_string(o.runs.size()));
  }
  BS_ASSIGN_OR_RETURN(auto reader, storage::TraceReader::open(o.path));
  BS_ASSIGN_OR_RETURN(auto a, analysis::analyzeRun(*reader, o.runs[0]));
  BS_ASSIGN_OR_RETURN(auto b, analysis::analyzeRun(*reader, o.runs[1]));
  analysis::TextTable table{
      {"", "run " + std::to_string(o.runs[0]), "run " + std::to_string(o.runs[1]), "change"}, {}};
  for (const auto& row : analysis::compareRuns(a, b)) {
    table.rows.push_back({row.metric, row.a, row.b, row.change});
  }
  return table.render(o.markdown);
}

ExitCode runCompare(const CompareOptions& o) {
  auto text = compare(o);
  if (!text.isOk()) {
    std::fprintf(stderr, "error: %s\n", text.status().message().c_str());
    return 1;
  }
  std::fputs(text->c_str(), stdout);
  return 0;
}

}  // namespace

void addCompareCommand(Command app, CommandRunner& runner) {
  Command cmd = app.subcommand("compare", "Two runs side by side, with the change of each");
  auto o = std::make_shared<CompareOptions>();
  cmd.option("file", o->path, "Trace file (.db)").required();
  cmd.option("--run", o->runs, "Run id; give it twice (--run A --run B)").required().positive();
  cmd.flag("--markdown", o->markdown, "A Markdown table");
  cmd.callback([&runner, o] { runner = [o] { return runCompare(*o); }; });
}

}  // namespace bubblescope::cli
