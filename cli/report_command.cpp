// `bubblescope-cli report FILE [--run ID] [--json | --markdown]
// [--memory-per-rank GiB] [--exclude-last-step] [--top-kernels N]`: where the
// time went, per rank, stage and parallel dimension, the GPU kernels, and
// advice with predicted gains (storage/analysis).
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "storage/analysis/moe_advice.h"
#include "storage/analysis/moe_comm.h"
#include "storage/analysis/moe_load.h"
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
  double memoryGiB = 0;          // > 0: the budget of the memory_headroom advice
  bool excludeLastStep = false;  // HTA's include_last_profiler_step=False for the GPU tables
  int32_t topKernels = analysis::kDefaultTopKernels;  // kernels listed per rank
};

// A run's report, its MoE blocks' load (storage/analysis/moe_load.h), its
// ep all-to-alls against their formula (moe_comm.h) and the MoE advice.
struct AnalyzedRun {
  analysis::RunReport report;
  std::vector<analysis::MoeBlockLoad> moe;
  analysis::EpComm epComm;
  std::vector<std::string> moeAdvice;
};

Result<std::vector<AnalyzedRun>> analyzeRuns(const ReportOptions& o) {
  BS_ASSIGN_OR_RETURN(auto reader, storage::TraceReader::open(o.path));
  std::vector<int64_t> ids;
  if (o.runId >= 0) {
    ids.push_back(o.runId);
  } else {
    BS_ASSIGN_OR_RETURN(auto runs, reader->runs());
    for (const auto& r : runs) ids.push_back(r.id);
  }
  std::vector<AnalyzedRun> runs;
  for (int64_t id : ids) {
    AnalyzedRun run;
    analysis::AnalysisOptions options;
    options.advice = true;
    options.includeLastProfilerStep = !o.excludeLastStep;
    if (o.memoryGiB > 0) {
      options.adviceOptions.memoryPerRankBytes = o.memoryGiB * 1024.0 * 1024.0 * 1024.0;
    }
    BS_ASSIGN_OR_RETURN(run.report, analysis::analyzeRun(*reader, id, options));
    // Every rank's MoE samples (each routed its own tokens).
    BS_ASSIGN_OR_RETURN(auto samples, reader->samples(id));
    run.moe = analysis::moeLoadFromSamples(samples);
    run.epComm = analysis::epCommOf(run.report, samples, run.moe, analysis::epDegreeOf(run.report));
    std::optional<double> capacityFactor;
    if (run.report.layout && run.report.layout->model.hasMoe())
      capacityFactor = run.report.layout->model.capacityFactor;
    run.moeAdvice = analysis::moeAdvice(run.moe, run.epComm, capacityFactor);
    runs.push_back(std::move(run));
  }
  return runs;
}

ExitCode runReport(const ReportOptions& o) {
  auto reports = analyzeRuns(o);
  if (!reports.isOk()) {
    std::fprintf(stderr, "error: %s\n", reports.status().message().c_str());
    return 1;
  }
  if (o.json) {
    std::vector<analysis::RunReport> plain;
    for (const auto& r : *reports) plain.push_back(r.report);
    auto j = analysis::reportToJson(plain, o.topKernels);
    for (size_t i = 0; i < reports->size(); ++i) {
      const AnalyzedRun& r = (*reports)[i];
      if (!r.moe.empty()) j["runs"][i]["moe"] = analysis::moeLoadJson(r.moe);
      if (!r.epComm.empty()) j["runs"][i]["ep_comm"] = analysis::epCommJson(r.epComm);
      if (!r.moe.empty()) j["runs"][i]["moe_advice"] = r.moeAdvice;
    }
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  if (reports->empty()) std::printf("%s holds no runs\n", o.path.c_str());
  for (size_t i = 0; i < reports->size(); ++i) {
    if (i > 0) std::printf("\n");
    std::fputs(analysis::reportToText((*reports)[i].report, o.markdown, o.topKernels).c_str(),
               stdout);
    const AnalyzedRun& r = (*reports)[i];
    std::fputs(analysis::moeLoadText(r.moe, o.markdown).c_str(), stdout);
    std::fputs(analysis::epCommText(r.epComm, o.markdown).c_str(), stdout);
    std::fputs(analysis::moeAdviceText(r.moeAdvice, o.markdown).c_str(), stdout);
  }
  return 0;
}

}  // namespace

void addReportCommand(Command app, CommandRunner& runner) {
  Command cmd = app.subcommand("report", "Where the time went: per rank, stage and dimension");
  auto o = std::make_shared<ReportOptions>();
  cmd.option("file", o->path, "Trace file (.db)").required();
  cmd.option("--run", o->runId, "Run id (default: every run)").positive();
  Option json = cmd.flag("--json", o->json, "One JSON object (docs/report-format.md)");
  cmd.flag("--markdown", o->markdown, "Markdown tables").excludes(json);
  cmd.option("--memory-per-rank", o->memoryGiB,
             "GiB per rank: advise a lower ZeRO stage or no recompute that fits it")
      .positive();
  cmd.flag("--exclude-last-step", o->excludeLastStep,
           "GPU time and kernel tables without the work launched in the last ProfilerStep "
           "(HTA's default, include_last_profiler_step=False)");
  cmd.option("--top-kernels", o->topKernels,
             "Kernels listed per rank in the GPU kernel table, by total time")
      .showDefault()
      .range(1, 1000);
  cmd.callback([&runner, o] { runner = [o] { return runReport(*o); }; });
}

}  // namespace bubblescope::cli
