#include "cli/calibrate_benchmark.h"

#include <cstdio>
#include <vector>

#include "cli/layout_trial.h"
#include "cli/run_description.h"
#include "storage/analysis/run_calibration.h"
#include "storage/trace_reader.h"

namespace bubblescope::cli {
namespace {

constexpr int64_t kBucketElements = 64 * 1024;  // 256 KiB of fp32

// The micro-benchmark's runs, the layers first (mergeCalibrations keeps the
// first cost of each op: the single-rank runs measure the layers alone).
std::vector<layout::Layout> benchmarkLayouts(const layout::ModelConfig& model, int32_t world,
                                             int32_t steps) {
  layout::Layout base;
  base.model = model;
  base.steps = steps;
  base.microBatches = 2;
  std::vector<layout::Layout> out;
  for (int32_t b : {1, 2, 4}) {
    layout::Layout l = base;
    l.microBatchSize = b;
    l.recompute = b == 1;  // recompute spans once, at size 1
    out.push_back(l);
  }
  if (world < 2) return out;
  for (auto zero : {layout::ZeroStage::kNone, layout::ZeroStage::kOptimizer}) {
    layout::Layout l = base;
    l.dp = world;
    l.zeroStage = zero;
    l.bucketElements = kBucketElements;
    out.push_back(l);
  }
  if (model.numHeads % 2 == 0) {
    layout::Layout l = base;
    l.tp = 2;
    out.push_back(l);
  }
  if (model.numLayers >= 2) {
    layout::Layout l = base;
    l.pp = 2;
    l.schedule = layout::ScheduleKind::kZeroBubbleH1;
    out.push_back(l);
  }
  return out;
}

}  // namespace

Result<layout::Calibration> benchmarkCalibration(const layout::ModelConfig& model, int32_t world,
                                                 const std::string& trace, int32_t steps) {
  std::vector<layout::Calibration> parts;
  for (const layout::Layout& l : benchmarkLayouts(model, world, steps)) {
    BS_RETURN_IF_ERROR(validate(l));
    std::fprintf(stderr, "calibrate: running %s b%d ...\n", runName(l).c_str(), l.microBatchSize);
    BS_ASSIGN_OR_RETURN(const int64_t runId, runLayout(l, trace, false,
                                                       "calibrate " + runName(l) + " b" +
                                                           std::to_string(l.microBatchSize)));
    BS_ASSIGN_OR_RETURN(auto reader, storage::TraceReader::open(trace));
    BS_ASSIGN_OR_RETURN(layout::Calibration c, analysis::calibrateFromRun(*reader, runId));
    parts.push_back(std::move(c));
  }
  layout::Calibration c = layout::mergeCalibrations(parts);
  c.name = "benchmark of " + model.preset + " on " + std::to_string(world) + " ranks";
  c.method = "benchmark";
  c.sourceRun = 0;
  return c;
}

}  // namespace bubblescope::cli
