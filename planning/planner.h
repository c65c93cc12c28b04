// planLayouts(): the valid layouts of a world size for a model, predicted
// from a calibration (prediction.h), the ones that fit the memory limit
// ranked by predicted tokens/s (docs/prediction.md, "Plan").
//
// Candidates: every dp × tp × pp = world with tp dividing the heads and pp at
// most the layers; ZeRO 0-3 when dp > 1 (0 otherwise); for pp > 1 each
// schedule (interleaved with v = 2); m in {1, 2, 4, 8, 16} (pp > 1: m >= pp);
// recompute off and on; micro-batch size `microBatchSize`; at ZeRO 0 with
// dp > 1 each of `compressions` and, where nodes split the dp group, the
// hierarchical all-reduce (grad_reduction_cost.h costs them); for a MoE
// model each ep dividing dp and the experts. Each is checked by validate()
// (the same rules as `run`) and predicted.
// Reasons follow the seeds' rules (docs/formulas.md, "Advice thresholds"): fits
// one device -> data parallel; tensor parallel inside a node; pipeline when
// layers must be split; ZeRO when memory is short; compression when
// communication is a large share of the step (its bytes ratio, the
// collectives' and the encoding's time); expert parallelism for a MoE model
// (1/ep of the experts a rank, its exposed all-to-alls); and each names what limits it
// most: bubble, exposed communication, or memory.
// The best are one per parallel shape (dp × tp × pp × ep) unless
// everyVariant: a shape's variants (schedule, ZeRO stage, m, recompute,
// compression, all-reduce) often sit within a fraction of a percent of each
// other, closer than the predictor's error (docs/prediction.md), so five
// variants of one shape are not an order it can vouch for, nor an answer to
// "which layout on N ranks"; each shape's best counts the others it stands for.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "planning/calibration.h"
#include "engine/layout/layout.h"
#include "planning/prediction.h"

namespace bubblescope::layout {

// The gradient compressions plan tries by default: the ones whose loss
// stayed near the uncompressed run's (docs/parallel.md; Top-K is left out:
// topk:0.1 ended 0.52 above it after 20 steps).
std::vector<GradCompressionSpec> defaultPlanCompressions();

// The largest world plan ranks layouts for (2^20 ranks): its divisors are
// enumerated up to the square root, so the bound keeps the candidates, not
// the loop, finite.
inline constexpr int32_t kMaxPlanWorld = 1 << 20;

struct PlanRequest {
  int32_t world = 1;  // 1 to kMaxPlanWorld
  ModelConfig model;
  std::optional<double> memoryPerRankBytes;  // none: no memory limit
  int32_t microBatchSize = 1;
  int32_t top = 5;
  // false: the best of each shape only (above); true: every candidate.
  bool everyVariant = false;
  // Tried on every ZeRO 0 layout with dp > 1 (validate() drops the rest).
  std::vector<GradCompressionSpec> compressions = defaultPlanCompressions();
  // Emulated nodes of K world ranks and their link, written into every
  // candidate (layout keys ranks_per_node, inter_node_gbps,
  // inter_node_latency_us); where the nodes split dp, the hierarchical
  // all-reduce is tried beside the flat one. And the hosts (host or
  // host:slots), whose nodes the prediction takes from them.
  int32_t ranksPerNode = 0;
  double interNodeGbps = 0;
  double interNodeLatencyUs = 0;
  std::vector<std::string> hosts;
  // What every candidate is predicted for beyond its layout (a background
  // load: prediction.h).
  PredictOptions predict;
};

struct PlanCandidate {
  Layout layout;
  Prediction prediction;
  double peakMemoryBytes = 0;  // the largest stage's
  std::string rule;            // which seed rule picked it
  std::string limit;           // what limits it most
  // Fitting candidates of its shape ranked below it that the list leaves
  // out for it (0 with everyVariant).
  int32_t variants = 0;
};

struct Plan {
  std::vector<PlanCandidate> best;  // at most `top`, best first
  int32_t valid = 0;                // layouts that passed validate()
  int32_t fitting = 0;              // of those, the ones within memory
  int32_t shapes = 0;               // distinct dp × tp × pp × ep among those
};

// Errors: world outside 1 to kMaxPlanWorld, no valid layout (naming the constraint that removed
// them all: the layout rules, with the first problem met, or memory, with
// the least any layout needs).
Result<Plan> planLayouts(const PlanRequest& request, const Calibration& calibration);

// A calibration from FLOPs alone for planning without measurements:
// forward of a part = its forward FLOPs (stage_split.h) / flopsPerSecond,
// backward twice that, optimizer 10 ns per parameter, no communication.
Calibration flopsCalibration(const ModelConfig& model, double flopsPerSecond);

// The compute rate `plan` (without --calibration) and the app's planner and
// layout editor (no measured calibration chosen) give flopsCalibration.
inline constexpr double kFlopsEstimatePerSecond = 10e9;

}  // namespace bubblescope::layout
