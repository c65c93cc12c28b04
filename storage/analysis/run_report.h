// RunReport: everything the analysis says about one run, as value structs
// (what `report`, `compare` and the GUI show).
//
// Units: times in ns, sizes in bytes; ratios are shares of step time in
// [0, 1]. Optional values are unknown (no data, or a layout key missing)
// and are shown as "-" or JSON null, never as 0.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/layout/layout.h"
#include "storage/analysis/advice.h"
#include "storage/analysis/gpu_kernel_analyzer.h"
#include "storage/analysis/gpu_time_analyzer.h"
#include "storage/analysis/kernel_breakdown.h"
#include "storage/analysis/step_times.h"
#include "storage/run_info.h"
#include "trace_model/event.h"

namespace bubblescope::analysis {

// One training step across the run: time is the latest end minus the
// earliest start over the ranks; loss from the rank that computed it.
struct StepSummary {
  int32_t step = 0;
  std::optional<double> loss;
  int64_t tokens = 0;  // the step's global batch in tokens (0 = unknown)
  int64_t timeNs = 0;
};

// Sums over the rank's steps (StepTimes); ratios divide by the summed step
// time.
struct RankReport : StepTimes {
  storage::RankInfo info;
  int32_t steps = 0;
  // The rank marks no step (no step records, no step-tagged events: an
  // Nsight or Kineto import without step ranges): its one window is the
  // whole run, which has no pipeline bubble (bubbleFraction() is unknown);
  // its wait and idle are shares of the whole run.
  bool wholeRun = false;

  // Peak of the samples "mem.<category>", and the ZeRO formula for the rank.
  struct Memory {
    std::string category;  // parameters | gradients | optimizer | activations
    std::optional<int64_t> measuredBytes;
    std::optional<int64_t> formulaBytes;           // kept between steps
    std::optional<int64_t> formulaTransientBytes;  // the most a step adds (formulas.h)
  };
  std::vector<Memory> memory;
  // GPU time with HTA's definitions, for ranks with GPU records (imported
  // Kineto traces, CUPTI runs); nullopt otherwise.
  std::optional<GpuTime> gpu;
  // Its GPU kernels, launches and memory copies (gpu_kernel_analyzer.h), for
  // ranks with GPU records; nullopt otherwise.
  std::optional<GpuKernels> kernels;

  std::optional<double> utilization() const { return ratio(computeNs); }
  std::optional<double> commRatio() const { return ratio(commNs); }
  // Communication of one parallel dimension / step.
  std::optional<double> commRatio(trace_model::ParallelDim dim) const {
    return ratio(commNsByDim[static_cast<size_t>(dim)]);
  }
  // The part of that communication no compute overlaps / step.
  std::optional<double> exposedCommRatio(trace_model::ParallelDim dim) const {
    return ratio(exposedCommNsByDim[static_cast<size_t>(dim)]);
  }
  std::optional<double> idleRatio() const { return ratio(idleNs); }
  std::optional<double> waitRatio() const { return ratio(waitNs); }
  std::optional<double> exposedCommRatio() const { return ratio(exposedCommNs); }
  // (wait + idle) / step: the share of the step spent neither computing nor
  // communicating (docs/design.md, "Metrics"); unknown for a rank without
  // steps (wholeRun), whose idle time is no pipeline bubble.
  std::optional<double> bubbleFraction() const {
    if (wholeRun) return std::nullopt;
    return ratio(waitNs + idleNs);
  }
  // |comm ∩ compute| / |comm|; unknown without communication.
  std::optional<double> overlap() const {
    if (commNs <= 0) return std::nullopt;
    return static_cast<double>(overlapNs) / commNs;
  }

 private:
  std::optional<double> ratio(int64_t ns) const {
    if (stepNs <= 0) return std::nullopt;
    return static_cast<double>(ns) / stepNs;
  }
};

// A pipeline stage (the ranks with one pp coordinate).
struct StageReport {
  int32_t stage = 0;
  std::vector<int32_t> ranks;
  std::optional<double> bubbleFraction;  // mean of its ranks' (wait + idle) / step
  std::optional<double> bubbleFormula;   // planning/formulas.h, for the run's schedule
  std::string bubbleFormulaText;
  int64_t computeNsPerStep = 0;  // the largest of its ranks', per step
  // The ideal-hardware replay's bubble (ideal_replay.h): oversubscribed
  // measured runs with thread CPU times only.
  std::optional<double> bubbleReplayed;
};

// A rank late against the other ranks of its stage in most steps.
struct Straggler {
  int32_t rank = 0;
  std::string reason;     // "compute" or "collective arrival"
  double lateNsMean = 0;  // mean lateness over the steps where it was late
  int32_t lateSteps = 0;  // steps late by more than the threshold
  int32_t steps = 0;      // steps compared
};

// Measured communication volume per rank per step (mean over the ranks that
// have it) against planning/formulas.h; formula unknown without a layout.
struct CommVolume {
  std::string dim;  // "dp+zero", "tp", "pp"
  double measuredBytesPerStep = 0;
  std::optional<double> formulaBytesPerStep;
};

struct RunReport {
  storage::RunRecord run;
  std::optional<layout::Layout> layout;  // run_layout.h; unknown: no formulas
  std::vector<StepSummary> steps;
  std::vector<RankReport> ranks;
  std::vector<StageReport> stages;
  std::optional<double> stepTimeMeanNs, stepTimeStdNs, stepTimeMinNs, stepTimeMaxNs;
  std::optional<double> tokensPerS;
  std::optional<int32_t> slowestRank;   // the most compute per step
  std::optional<int32_t> slowestStage;  // the stage whose slowest rank computes most
  std::vector<Straggler> stragglers;
  std::vector<CommVolume> commVolume;
  // Each kernel name's total over the ranks that ran it (kernel_breakdown.h).
  std::map<std::string, KernelSpread, std::less<>> kernelSpreads;
  std::vector<std::string> notes;        // run health, oversubscription, missing data
  std::optional<double> replayedStepNs;  // the ideal-hardware replay's step (ideal_replay.h)
  // Rules with layout changes and predicted gains (advice.h); filled when
  // AnalysisOptions::advice asks for it.
  std::vector<Advice> advice;
};

}  // namespace bubblescope::analysis
