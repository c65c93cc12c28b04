// planCluster(): the layouts of a model on N GPUs of a hardware profile at a
// global batch, ranked by the cluster cost model (cluster_cost.h) through
// predictLayout (docs/prediction.md, "The cluster model").
//
// Candidates: tp a power of two up to the GPUs of a node dividing the heads
// and N; pp dividing N/tp, at most the layers; dp = N/(tp·pp) dividing the
// global batch B; micro-batch size b dividing B/dp, m = B/(dp·b); ZeRO 0-3
// (dp > 1; validate() drops what the engine refuses); 1F1B, and with pp > 1
// GPipe, interleaved (each v >= 2 with pp·v dividing the layers and pp
// dividing m) and ZB-H1; recompute off and on. The search is pruned: each
// candidate first gets a closed-form estimate from the same op costs
// (compute per micro-batch × (m + the schedule's bubble) + the gradient
// collectives, and its memory with the schedule's in-flight micro-batches
// from warmupForwards()); only the `simulated` best estimates that fit
// are simulated, and ranked by the simulated step.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "planning/cluster_cost.h"
#include "planning/hardware.h"
#include "engine/layout/layout.h"
#include "engine/layout/model_config.h"
#include "planning/prediction.h"

namespace bubblescope::layout {

struct ClusterPlanRequest {
  HardwareProfile hardware;
  ModelConfig model;
  int32_t gpus = 1;
  int64_t globalBatch = 1;  // sequences per iteration
  ClusterSettings settings;
  int32_t top = 5;
  int32_t simulated = 24;  // candidates simulated after the estimate
  // Restrictions (none: every value above): bench cluster fixes tp and pp
  // to the paper's and recompute on.
  std::optional<int32_t> tp;
  std::optional<int32_t> pp;
  std::optional<bool> recompute;
  std::vector<int32_t> microBatchSizes = {1, 2, 4, 8};
  std::vector<ZeroStage> zeroStages = {ZeroStage::kNone, ZeroStage::kOptimizer,
                                       ZeroStage::kGradients, ZeroStage::kParameters};
  std::vector<ScheduleKind> schedules = allScheduleKinds();
};

struct ClusterCandidate {
  Layout layout;  // hosts: clusterHosts
  Prediction prediction;
  double peakMemoryBytes = 0;   // the largest stage's
  double tflopsPerGpu = 0;      // executed FLOPs (recompute counted) / (step · N), TFLOP/s
  double mfu = 0;               // model FLOPs (no recompute) / (step · N · peak)
  std::string limit;            // what limits it most, with its share
};

struct ClusterPlan {
  std::vector<ClusterCandidate> best;  // at most `top`, fastest first
  int32_t considered = 0;              // valid layouts estimated
  int32_t fitEstimate = 0;             // of those, within memory by the estimate
  int32_t simulatedCount = 0;          // simulated
};

// Errors: gpus < 1 or batch < 1, no layout at all (naming the rule that
// removed them: the batch not divisible by any dp, the heads, the layout
// rules), none that fits (with the least memory any needs and the GPU's).
Result<ClusterPlan> planCluster(const ClusterPlanRequest& request);

// Paper FLOPs (megatronIterationFlops) when recompute is on, else the model
// FLOPs 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)), per GPU per second, TFLOP/s.
double clusterTflopsPerGpu(const Layout& layout, double stepNs);
// The model FLOPs (no recompute) over the step, the GPUs and the peak.
double clusterMfu(const Layout& layout, double stepNs, double peakFlops);

// "exposed dp communication (12% of the step)", "pipeline bubble (8%)",
// "memory (93% of 80 GiB)", "compute": the largest of the three shares
// (memory counts from 90% of capacity).
std::string clusterLimit(const Prediction& p, double peakMemoryBytes, double capacityBytes);

}  // namespace bubblescope::layout
