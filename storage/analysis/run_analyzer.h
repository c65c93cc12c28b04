// analyzeRun: the whole analysis of one run of a trace file.
//
// Contract: streams the run rank by rank, a rank per thread on every core
// (forEachRankInParallel, each thread with its own reader of the file) and,
// within a rank, step by step (TraceReader::visitEvents + RankStepAnalyzer),
// so memory is bounded by the open steps of the ranks being read plus a few
// numbers per rank and step, not by the run's event count; a rank with GPU
// records adds, while it is read, its launches (gpu_time_analyzer.h,
// gpu_kernel_analyzer.h) and 16 bytes per GPU record (the percentiles of
// gpu_kernel_analyzer.h), and keeps a few numbers per kernel name. The report does
// not depend on the number of threads; onRankDone is called on the calling
// thread with 1, 2, … in order. Works on runs still being written (what is committed), on
// failed, interrupted and empty runs (notes say so). Errors: a missing run id
// (kNotFound, listing the runs the file holds), or what the reader reports.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "common/result.h"
#include "storage/analysis/run_report.h"
#include "storage/analysis/stragglers.h"
#include "storage/trace_reader.h"

namespace bubblescope::analysis {

struct AnalysisOptions {
  StragglerOptions stragglers;
  // Called on the analysing thread after each rank, with the ranks done and
  // the run's rank count; returning false stops the analysis, which then
  // fails with FailedPrecondition("analysis cancelled"). Empty: not called.
  std::function<bool(int32_t ranksDone, int32_t ranksTotal)> onRankDone;
  // Fill RunReport::advice (advice.h), its gains predicted from a
  // calibration of the run itself (run_calibration.h). Not for simulated
  // runs (a prediction already); an imported run, a run still being
  // written, or one with more than adviceMaxEvents events (the calibration
  // reads every op) gets findings without gains (a note says why).
  bool advice = false;
  AdviceOptions adviceOptions;
  int64_t adviceMaxEvents = 5'000'000;
  // The GPU time (gpu_time_analyzer.h) and the GPU kernel tables
  // (gpu_kernel_analyzer.h) count the work launched in the last
  // ProfilerStep: Holistic Trace Analysis's include_last_profiler_step.
  bool includeLastProfilerStep = true;
  // The ranks' sums (utilisation, communication, wait, idle, and so the
  // stages' bubbles) count the steady steps only: those after the first
  // (when there are more) that are not hiccups (typical_steps.h), each
  // step's time the step table's; the steps a prediction describes. The
  // step table, the stragglers and the GPU figures keep every step.
  bool steadyStepsOnly = false;
};

// Step windows per rank come from the steps table; a rank without step rows
// uses the spans of its step-tagged events; a rank with neither is analysed
// as one step (step -1) over the run's time range.
Result<RunReport> analyzeRun(storage::TraceReader& reader, int64_t runId,
                             const AnalysisOptions& options = {});

}  // namespace bubblescope::analysis
