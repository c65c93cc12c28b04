#include "storage/analysis/run_analyzer.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "planning/formulas.h"
#include "storage/analysis/gpu_kernel_analyzer.h"
#include "storage/analysis/gpu_time_analyzer.h"
#include "storage/analysis/ideal_replay.h"
#include "storage/analysis/measured_step.h"
#include "storage/analysis/parallel_ranks.h"
#include "storage/analysis/rank_step_analyzer.h"
#include "storage/analysis/run_calibration.h"
#include "storage/analysis/run_layout.h"
#include "storage/analysis/typical_steps.h"
#include "storage/calibration_store.h"

namespace bubblescope::analysis {
namespace {

using trace_model::ParallelDim;

constexpr const char* kMemoryCategories[] = {"parameters", "gradients", "optimizer", "activations"};

// A run imported from Kineto traces (the importer's layout JSON says
// "source": "kineto").
bool isKinetoImport(const storage::RunInfo& info) {
  if (!info.imported) return false;
  const auto layout = nlohmann::json::parse(info.layoutJson, nullptr, false);
  return layout.is_object() && layout.value("source", "") == "kineto";
}

// Sorted, disjoint windows: a window overlapping its predecessor starts at
// the predecessor's end (a rank runs one step at a time).
std::vector<trace_model::StepWindow> disjoint(std::vector<trace_model::StepWindow> windows) {
  std::sort(windows.begin(), windows.end(),
            [](const trace_model::StepWindow& a, const trace_model::StepWindow& b) {
              return a.startNs < b.startNs;
            });
  for (size_t i = 1; i < windows.size(); ++i) {
    windows[i].startNs = std::max(windows[i].startNs, windows[i - 1].endNs);
    windows[i].endNs = std::max(windows[i].endNs, windows[i].startNs);
  }
  return windows;
}

Result<std::map<int32_t, std::vector<trace_model::StepWindow>>> stepWindows(
    storage::TraceReader& reader, int64_t runId, const std::vector<storage::RankInfo>& ranks,
    const std::vector<trace_model::StepRecord>& steps, std::vector<std::string>& notes) {
  std::map<int32_t, std::vector<trace_model::StepWindow>> windows;
  for (const auto& s : steps) windows[s.rank].push_back({s.step, s.startNs, s.endNs});
  bool missing = false;
  for (const auto& r : ranks) missing |= !windows.contains(r.rank);
  if (!missing) return windows;
  BS_ASSIGN_OR_RETURN(auto spans, reader.stepSpans(runId));
  // Only ranks without step rows take their windows from their events.
  bool fromSpans = false;
  std::map<int32_t, std::vector<trace_model::StepWindow>> fromEvents;
  for (const auto& s : spans) fromEvents[s.rank].push_back(s.window);
  BS_ASSIGN_OR_RETURN(auto range, reader.timeRange(runId));
  bool wholeRun = false;
  for (const auto& r : ranks) {
    if (windows.contains(r.rank)) continue;
    if (auto it = fromEvents.find(r.rank); it != fromEvents.end()) {
      windows[r.rank] = it->second;
      fromSpans = true;
    } else if (range.second > range.first) {
      windows[r.rank] = {{-1, range.first, range.second}};
      wholeRun = true;
    }
  }
  if (fromSpans) notes.push_back("some ranks have no step records: their steps span their events");
  if (wholeRun) {
    notes.push_back(
        "some ranks have no steps at all: each is analysed as one step (its whole run), which has "
        "no pipeline bubble");
  }
  return windows;
}

void addTo(RankReport& r, const RankStepMetrics& m) {
  ++r.steps;
  r += m;
}

std::vector<StepSummary> summarizeSteps(
    const std::vector<trace_model::StepRecord>& steps,
    const std::map<int32_t, std::vector<trace_model::StepWindow>>& windows) {
  struct Acc {
    int64_t start = INT64_MAX, end = INT64_MIN, tokens = 0;
    std::optional<double> loss;
  };
  std::map<int32_t, Acc> by;
  for (const auto& s : steps) {
    Acc& a = by[s.step];
    a.start = std::min(a.start, s.startNs);
    a.end = std::max(a.end, s.endNs);
    a.tokens = std::max(a.tokens, s.tokens);
    if (!std::isnan(s.loss)) a.loss = s.loss;
  }
  if (steps.empty()) {
    for (const auto& [rank, ws] : windows) {
      for (const trace_model::StepWindow& w : ws) {
        if (w.step < 0) continue;
        Acc& a = by[w.step];
        a.start = std::min(a.start, w.startNs);
        a.end = std::max(a.end, w.endNs);
      }
    }
  }
  std::vector<StepSummary> out;
  for (const auto& [step, a] : by) out.push_back({step, a.loss, a.tokens, a.end - a.start});
  return out;
}

// The steps after the first (when there are more) that are not hiccups
// (typical_steps.h), each step's time the step table's.
std::set<int32_t> steadySteps(const std::vector<StepSummary>& steps) {
  std::map<int32_t, double> times;
  for (size_t i = steps.size() > 1 ? 1 : 0; i < steps.size(); ++i) {
    times[steps[i].step] = static_cast<double>(steps[i].timeNs);
  }
  return typicalSteps(times);
}

void summarizeRun(RunReport& report) {
  const auto& steps = report.steps;
  if (!steps.empty()) {
    double sum = 0, sq = 0, lo = INFINITY, hi = -INFINITY, tokens = 0, tokenNs = 0;
    for (const auto& s : steps) {
      sum += s.timeNs;
      lo = std::min(lo, static_cast<double>(s.timeNs));
      hi = std::max(hi, static_cast<double>(s.timeNs));
      if (s.tokens > 0 && s.timeNs > 0) tokens += s.tokens, tokenNs += s.timeNs;
    }
    const double mean = sum / steps.size();
    for (const auto& s : steps) sq += (s.timeNs - mean) * (s.timeNs - mean);
    report.stepTimeMeanNs = mean;
    report.stepTimeStdNs = std::sqrt(sq / steps.size());
    report.stepTimeMinNs = lo;
    report.stepTimeMaxNs = hi;
    if (tokenNs > 0) report.tokensPerS = tokens / (tokenNs / 1e9);
  }
  double most = -1;
  for (const auto& r : report.ranks) {
    if (r.steps == 0) continue;
    const double perStep = static_cast<double>(r.computeNs) / r.steps;
    if (perStep > most) most = perStep, report.slowestRank = r.info.rank;
  }
  int64_t stageMost = -1;
  for (const auto& s : report.stages) {
    if (s.computeNsPerStep > stageMost)
      stageMost = s.computeNsPerStep, report.slowestStage = s.stage;
  }
}

void buildStages(RunReport& report) {
  std::map<int32_t, StageReport> stages;
  std::map<int32_t, std::pair<double, int>> bubbleSums;
  for (const auto& r : report.ranks) {
    if (r.info.pp < 0) continue;  // an imported rank whose stage is not known
    StageReport& s = stages[r.info.pp];
    s.stage = r.info.pp;
    s.ranks.push_back(r.info.rank);
    if (r.steps > 0) s.computeNsPerStep = std::max(s.computeNsPerStep, r.computeNs / r.steps);
    if (auto b = r.bubbleFraction())
      bubbleSums[r.info.pp].first += *b, ++bubbleSums[r.info.pp].second;
  }
  std::optional<double> formula;
  std::string text;
  if (report.layout) {
    formula = layout::formulaBubble(*report.layout);
    text = layout::bubbleFormulaText(*report.layout);
  }
  for (auto& [stage, s] : stages) {
    if (auto it = bubbleSums.find(stage); it != bubbleSums.end() && it->second.second > 0) {
      s.bubbleFraction = it->second.first / it->second.second;
    }
    s.bubbleFormula = formula;
    s.bubbleFormulaText = text;
    report.stages.push_back(std::move(s));
  }
}

// Ψ of one rank: the count the rank stored (ranks.parameters, its stage's
// layers with its tp slices), else the even split of formulas.h.
double parametersOfRank(const layout::Layout& l, const RankReport& r) {
  return r.info.parameters > 0 ? static_cast<double>(r.info.parameters)
                               : layout::parametersPerRank(l);
}

void buildCommVolume(RunReport& report) {
  struct Row {
    const char* dim;
    std::vector<ParallelDim> dims;
  };
  const Row rows[] = {{"dp+zero", {ParallelDim::kDp, ParallelDim::kZero}},
                      {"tp", {ParallelDim::kTp}},
                      {"pp", {ParallelDim::kPp}},
                      {"unknown", {ParallelDim::kUnknown}}};  // imported, group not named
  for (const Row& row : rows) {
    double measured = 0, formulaSum = 0;
    int measuredRanks = 0, formulaRanks = 0;
    for (const auto& r : report.ranks) {
      if (r.steps == 0) continue;
      int64_t bytes = 0;
      for (ParallelDim d : row.dims) bytes += r.commVolumeByDim[static_cast<int>(d)];
      measured += static_cast<double>(bytes) / r.steps;
      ++measuredRanks;
      std::optional<double> f;
      if (const auto& l = report.layout) {
        if (row.dims[0] == ParallelDim::kDp) {
          f = layout::dataParallelVolumeBytes(*l, parametersOfRank(*l, r), r.info.rank);
        }
        if (row.dims[0] == ParallelDim::kTp) f = layout::tensorParallelVolumeBytes(*l);
        if (row.dims[0] == ParallelDim::kPp && r.info.pp >= 0 && r.info.pp < l->pp) {
          f = layout::pipelineVolumeBytes(*l, r.info.pp);
        }
      }
      if (f) formulaSum += *f, ++formulaRanks;
    }
    CommVolume v{row.dim, measuredRanks ? measured / measuredRanks : 0.0, std::nullopt};
    if (formulaRanks > 0 && formulaRanks == measuredRanks)
      v.formulaBytesPerStep = formulaSum / formulaRanks;
    if (v.measuredBytesPerStep > 0 || v.formulaBytesPerStep.value_or(0) > 0) {
      report.commVolume.push_back(v);
    }
  }
}

Status addMemory(storage::TraceReader& reader, RunReport& report) {
  auto formulaOf = [&report](const RankReport& r) -> std::optional<layout::ModelStateBytes> {
    if (!report.layout) return std::nullopt;
    return layout::zeroModelStateBytes(*report.layout, parametersOfRank(*report.layout, r));
  };
  for (const char* category : kMemoryCategories) {
    BS_ASSIGN_OR_RETURN(auto peaks,
                        reader.samplePeaks(report.run.id, std::string("mem.") + category));
    std::map<int32_t, double> byRank;
    for (const auto& p : peaks) byRank[p.rank] = p.value;
    for (auto& r : report.ranks) {
      RankReport::Memory m{category, std::nullopt, std::nullopt, std::nullopt};
      if (auto it = byRank.find(r.info.rank); it != byRank.end()) {
        m.measuredBytes = static_cast<int64_t>(std::llround(it->second));
      }
      if (const auto formula = formulaOf(r)) {
        const std::string c = category;
        auto set = [&m](double kept, double transient) {
          m.formulaBytes = std::llround(kept);
          m.formulaTransientBytes = std::llround(transient);
        };
        if (c == "parameters") set(formula->parameters, formula->transientParameters);
        if (c == "gradients") set(formula->gradients, formula->transientGradients);
        if (c == "optimizer") set(formula->optimizer, 0);
      }
      r.memory.push_back(std::move(m));
    }
  }
  return Status::ok();
}

void addNotes(RunReport& report) {
  auto& notes = report.notes;
  switch (report.run.health) {
    case storage::RunHealth::kRunning:
      notes.push_back("the run is still being written: this covers the " +
                      std::to_string(report.run.eventCount) + " events committed so far");
      break;
    case storage::RunHealth::kInterrupted:
      notes.push_back(
          "the run was interrupted (its writer is gone): this covers what it committed");
      break;
    case storage::RunHealth::kStopped:
      notes.push_back("the run was stopped" +
                      (report.run.error.empty() ? std::string() : " (" + report.run.error + ")") +
                      ": this covers what it committed");
      break;
    case storage::RunHealth::kFailed:
      notes.push_back("the run failed" +
                      (report.run.error.empty() ? std::string() : ": " + report.run.error));
      break;
    case storage::RunHealth::kFinished:
      break;
  }
  if (report.run.eventCount == 0) notes.push_back("the run has no events");
  std::vector<trace_model::RankInfo> infos;
  for (const auto& r : report.ranks) infos.push_back(r.info);
  for (const std::string& host : oversubscribedHosts(infos)) {
    notes.push_back("oversubscribed: " + host + ", so spans stretch unevenly");
  }
}

// The ideal-hardware replay of an oversubscribed measured run (a run whose
// spans carry no CPU time gets a note instead).
// `measured` is read on first use and kept for the advice.
Status addIdealReplay(storage::TraceReader& reader, int64_t runId, RunReport& report,
                      std::optional<MeasuredOps>& measured) {
  bool oversubscribed = false;
  for (const auto& r : report.ranks) {
    oversubscribed |= r.info.coresOnHost > 0 && r.info.ranksOnHost > r.info.coresOnHost;
  }
  if (!oversubscribed || report.run.info.simulated || !report.layout) return Status::ok();
  if (!measured) {
    BS_ASSIGN_OR_RETURN(measured, measureOps(reader, runId));
  }
  auto replay = replayIdealHardware(*measured);
  if (!replay.isOk()) {
    report.notes.push_back("no ideal-hardware replay: " + replay.status().message());
    return Status::ok();
  }
  for (StageReport& s : report.stages) {
    if (s.stage >= 0 && s.stage < static_cast<int32_t>(replay->bubble.size())) {
      s.bubbleReplayed = replay->bubble[s.stage];
    }
  }
  report.replayedStepNs = replay->stepNs;
  report.notes.push_back(
      "bubble replayed: the run's measured thread CPU costs per op replayed "
      "with one core per rank (" +
      std::to_string(replay->steps) + " steps)");
  return Status::ok();
}

// The run's own calibration, completed by the file's stored calibrations of
// the same model and backend (layout::mergeCalibrations, the run's costs
// first): the costs of what the run did not measure, such as other
// micro-batch sizes. A file without stored calibrations leaves it as it is.
layout::Calibration withStoredCalibrations(layout::Calibration own, const std::string& path) {
  auto stored = storage::loadCalibrations(path);
  if (!stored.isOk()) return own;
  std::vector<layout::Calibration> parts{own};
  for (layout::Calibration& c : *stored) {
    if (c.backend == own.backend && layout::calibrationMismatches(c, own.model).empty()) {
      parts.push_back(std::move(c));
    }
  }
  if (parts.size() == 1) return own;
  // The run's own costs as it measured them (the merge takes a layer's
  // median over its parts).
  layout::Calibration merged = layout::withOwnCosts(layout::mergeCalibrations(parts), own);
  merged.ranksPerHost = own.ranksPerHost;  // the run's own wall-or-CPU choice
  return merged;
}

// The advice rules (advice.h), their gains from a calibration of this run.
Status addAdvice(storage::TraceReader& reader, int64_t runId, const AnalysisOptions& options,
                 RunReport& report, std::optional<MeasuredOps>& measured) {
  if (report.run.info.simulated) return Status::ok();  // a prediction already: no advice
  std::optional<layout::Calibration> calibration;
  if (report.run.info.imported || !report.layout) {
    // Rules on measurements alone; no calibration to predict with.
  } else if (report.run.health == storage::RunHealth::kRunning) {
    report.notes.push_back("advice without predicted gains until the run finishes");
  } else if (report.run.eventCount > options.adviceMaxEvents) {
    report.notes.push_back("advice without predicted gains: the run has " +
                           std::to_string(report.run.eventCount) + " events (more than " +
                           std::to_string(options.adviceMaxEvents) +
                           "); calibrate from a shorter run");
  } else {
    Status why = Status::ok();  // a failure costs the gains, not the report
    if (!measured) {
      auto ops = measureOps(reader, runId);
      if (ops.isOk()) {
        measured = std::move(*ops);
      } else {
        why = ops.status();
      }
    }
    if (measured) {
      auto c = calibrationOf(*measured, runId);
      if (c.isOk()) {
        calibration = withStoredCalibrations(std::move(*c), reader.path());
      } else {
        why = c.status();
      }
    }
    if (!why.isOk()) report.notes.push_back("advice without predicted gains: " + why.message());
  }
  report.advice = adviseRun(report, calibration, options.adviceOptions);
  return Status::ok();
}

}  // namespace

Result<RunReport> analyzeRun(storage::TraceReader& reader, int64_t runId,
                             const AnalysisOptions& options) {
  RunReport report;
  BS_ASSIGN_OR_RETURN(report.run, reader.run(runId));
  report.layout = runLayout(report.run.info.layoutJson, report.run.info.modelJson);
  BS_ASSIGN_OR_RETURN(auto ranks, reader.ranks(runId));
  BS_ASSIGN_OR_RETURN(auto steps, reader.steps(runId));
  BS_ASSIGN_OR_RETURN(auto windows, stepWindows(reader, runId, ranks, steps, report.notes));
  report.steps = summarizeSteps(steps, windows);
  const std::optional<std::set<int32_t>> counted =
      options.steadyStepsOnly ? std::optional(steadySteps(report.steps)) : std::nullopt;

  // Ranks are analysed in parallel (each thread with its own reader) and
  // gathered in rank order, so the report is the same on any thread count.
  struct RankResult {
    RankReport report;
    std::vector<StragglerSample> perStep;  // a few numbers per step
  };
  std::vector<RankResult> results(ranks.size());
  std::vector<std::vector<trace_model::StepWindow>> rankWindows(ranks.size());
  for (size_t i = 0; i < ranks.size(); ++i) rankWindows[i] = disjoint(windows[ranks[i].rank]);
  // HTA's GPU figures: the launch cut applies when the run has two or more
  // steps; a Kineto import's steps are its ProfilerStep annotations (read
  // from the events: its stored windows are GPU time), any other run's are
  // its stored step windows.
  std::set<int32_t> stepNumbers;
  for (const auto& s : steps) stepNumbers.insert(s.step);
  GpuTimeOptions gpuOptions;
  gpuOptions.includeLastStep = options.includeLastProfilerStep;
  gpuOptions.launchCut = stepNumbers.size() >= 2;
  const bool profilerStepsFromEvents = isKinetoImport(report.run.info);
  auto analyzeRank = [&](storage::TraceReader& rankReader, int64_t i) -> Status {
    const trace_model::RankInfo& info = ranks[i];
    RankResult& out = results[i];
    out.report.info = info;
    // stepWindows' one window of the whole run (step -1) for a rank without steps.
    out.report.wholeRun = rankWindows[i].size() == 1 && rankWindows[i][0].step < 0;
    RankStepAnalyzer analyzer(info.rank, rankWindows[i]);
    const auto profilerSteps =
        profilerStepsFromEvents ? std::nullopt : std::optional(rankWindows[i]);
    GpuTimeAnalyzer gpu(gpuOptions, profilerSteps);
    // The kernel tables are cut as the GPU time is (HTA cuts its trace once).
    GpuKernelAnalyzer kernels(gpuOptions.launchCut, gpuOptions.includeLastStep, profilerSteps);
    BS_RETURN_IF_ERROR(rankReader.visitEvents(runId, info.rank, [&](const trace_model::Event& e) {
      analyzer.add(e);
      gpu.add(e);
      kernels.add(e);
      return Status::ok();
    }));
    out.report.gpu = gpu.finish();
    out.report.kernels = kernels.finish();
    for (const RankStepMetrics& m : analyzer.finish()) {
      if (!counted || counted->count(m.step) > 0) addTo(out.report, m);
      out.perStep.push_back(stragglerSampleOf(m));
    }
    return Status::ok();
  };
  std::function<bool(int64_t)> onDone;
  if (options.onRankDone) {
    onDone = [&](int64_t done) {
      return options.onRankDone(static_cast<int32_t>(done), static_cast<int32_t>(ranks.size()));
    };
  }
  BS_RETURN_IF_ERROR(forEachRankInParallel(reader, static_cast<int64_t>(ranks.size()),
                                           analysisThreads(), analyzeRank, onDone));
  std::vector<StragglerSample> perStep;
  std::map<int32_t, int32_t> stageOfRank;
  for (RankResult& r : results) {
    stageOfRank[r.report.info.rank] = r.report.info.pp;
    perStep.insert(perStep.end(), r.perStep.begin(), r.perStep.end());
    report.ranks.push_back(std::move(r.report));
  }
  std::vector<std::pair<int32_t, const KernelBreakdown*>> breakdowns;
  for (const RankReport& r : report.ranks) {
    if (r.kernels) breakdowns.emplace_back(r.info.rank, &r.kernels->breakdown);
  }
  report.kernelSpreads = kernelSpreads(breakdowns);
  buildStages(report);
  buildCommVolume(report);
  BS_RETURN_IF_ERROR(addMemory(reader, report));
  report.stragglers = findStragglers(perStep, stageOfRank, options.stragglers);
  summarizeRun(report);
  addNotes(report);
  std::optional<MeasuredOps> measured;  // read once, for the replay and the advice
  BS_RETURN_IF_ERROR(addIdealReplay(reader, runId, report, measured));
  if (options.advice) BS_RETURN_IF_ERROR(addAdvice(reader, runId, options, report, measured));
  return report;
}

}  // namespace bubblescope::analysis
