// Advice on a measured run (docs/analysis.md, "Advice"): rules over its
// RunReport, each finding paired with the layout change that answers it and
// that change's gain predicted by layout::predictLayout from a calibration
// made from the run itself (run_calibration.h, the same as `calibrate`).
//
// Rules (rule ids are stable: they are JSON keys' values):
//  - "comm_share" (per dimension dp, tp, pp, zero): the dimension's exposed
//    communication (not overlapped with compute), mean over the ranks, is
//    above `commShare` of the step (the seeds' monitoring rule: restructure
//    above 20%; hidden communication costs the step nothing);
//  - "bubble_above_formula" (pp, runs of 2 stages or more): a stage's
//    measured bubble is above its formula by more than `bubbleExcessPoints`
//    and by more than `bubbleExcessRatio` times; when the ideal-hardware replay of an
//    oversubscribed run is near the formula the message says the shared
//    cores, not the schedule, stretched it;
//  - "straggler" (pp when pipelined, else ""): each straggler of the report
//    (on an oversubscribed run one piece for them all: ranks sharing cores
//    straggle by turns, the change is a core per rank); the change is to
//    the rank's host (moving off it when the run spans several hosts), the
//    gain the predicted step of the same layout (every op at the
//    calibration's mean over all ranks: the others' pace; without its
//    straggler factor) against the measured mean step;
//  - "memory_headroom" (zero or ""): with a memory budget per rank, a lower
//    ZeRO stage and/or recompute off whose predicted peak memory fits the
//    budget and whose predicted tokens/s is higher;
//  - "few_micro_batches" (pp): pp > 1 and m < `microBatchesPerStage` · pp.
// Every rule but the straggler's searches a small set of nearby layouts (the
// same world size; each validated as `run` validates) and names the one
// with the most predicted tokens/s, if it beats the run's own layout's
// prediction by at least `minGain` (and fits the memory budget when one is
// given), preferring the layouts that keep the global batch dp·m·b (a
// training hyper-parameter) when any qualifies; otherwise the advice has no
// change.
//
// Candidates at a micro-batch size the calibration never measured are left
// out (op costs do not scale linearly in it), and the message says so; so
// are candidates whose prediction guesses a cost the run's own layout's
// does not (a "no ..." warning of layout::predictLayout: another
// dimension's fit, half an all-reduce, a cost taken as 0, layer costs
// scaled to another tp degree), the message naming the first.
//
// Pure: values in, values out; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "planning/calibration.h"
#include "engine/layout/layout.h"

namespace bubblescope::analysis {

struct RunReport;  // run_report.h (which holds a run's advice)

struct AdviceOptions {
  double commShare = 0.20;                   // comm_share fires above this share of the step
  double bubbleExcessPoints = 0.10;          // bubble_above_formula: measured - formula above this
  double bubbleExcessRatio = 1.5;            // ... and measured above this × formula
  int32_t microBatchesPerStage = 4;          // few_micro_batches fires when m < this × pp
  double minGain = 0.02;                     // a change is named when tokens/s gains at least this
  std::optional<double> memoryPerRankBytes;  // memory_headroom needs a budget
};

// What the predictor says of the run's layout ("before") and of the
// suggested one ("after"), both from the same calibration. For the
// straggler rule "before" is the run's measured mean step instead.
struct PredictedGain {
  double stepNsBefore = 0;
  double stepNsAfter = 0;
  double tokensPerSBefore = 0;
  double tokensPerSAfter = 0;
  double peakMemoryBytesBefore = 0;  // the largest stage's, predicted
  double peakMemoryBytesAfter = 0;
  bool measuredBefore = false;  // the straggler rule: "before" is the measured step

  // tokens/s after / before - 1 (0.25: 25% more throughput).
  double gain() const { return tokensPerSBefore > 0 ? tokensPerSAfter / tokensPerSBefore - 1 : 0; }
  // step after / before - 1 (-0.2: the step is 20% shorter).
  double stepChange() const { return stepNsBefore > 0 ? stepNsAfter / stepNsBefore - 1 : 0; }
};

struct Advice {
  std::string rule;                      // "comm_share", "bubble_above_formula", "straggler", ...
  std::string dimension;                 // "dp", "tp", "pp", "zero"; "" when the rule has none
  std::string message;                   // the finding, one or two sentences
  std::string change;                    // "pp 4 -> 2, dp 1 -> 2, m 8 -> 4"; "" when none is named
  std::optional<layout::Layout> layout;  // the suggested layout (absent: no layout change)
  std::optional<PredictedGain> predicted;

  // "predicted step 120.00 ms -> 95.00 ms (-20.8%), tokens/s 1000 -> 1263 (+26.3%)";
  // "" without a prediction.
  std::string predictedText() const;
};

// The advice for `report`. Without a layout the rules that need one stay
// silent; without a calibration findings come without changes.
std::vector<Advice> adviseRun(const RunReport& report,
                              const std::optional<layout::Calibration>& calibration,
                              const AdviceOptions& options = {});

// The fields that differ, in a fixed order (dp, tp, pp, schedule, v, m, b,
// zero, recompute, overlap, bucket, grad_compression, all_reduce,
// stage_layers, then the global batch dp·m·b in sequences when it changes):
// "dp 1 -> 2, pp 4 -> 2, m 8 -> 4", "zero 2 -> 1, recompute on -> off",
// "m 8 -> 16, global batch 8 -> 16", "bucket 1000 elements -> 25 MiB".
std::string layoutChangeText(const layout::Layout& from, const layout::Layout& to);

}  // namespace bubblescope::analysis
