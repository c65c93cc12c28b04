// benchmarkCalibration(): `calibrate --model M --world N` without a run of
// the user's (docs/prediction.md, "Calibration"): a short micro-benchmark
// made of real, short runs of model M on this machine, each calibrated
// (analysis::calibrateFromRun) and merged into one calibration
// (layout::mergeCalibrations):
//  - the layers at micro-batch sizes 1, 2 and 4 (single rank; forward,
//    backward, recompute, optimizer);
//  - when N >= 2, the collectives: dp N with 256 KiB gradient buckets, ZeRO 0
//    (all-reduce) and ZeRO 1 (reduce-scatter, all-gather), so each has
//    several message sizes (the buckets, the last one's rest, the 8-byte
//    loss) for its alpha-beta fit; tp 2 (its per-layer all-reduces, layer
//    costs at tp 2) when the heads divide; pp 2 ZB-H1 (pipeline transfers,
//    split B and W costs) when the model has 2 layers or more.
// Every run has m = 2 and `steps` steps and is written into `trace` (named
// "calibrate ..."), so what was measured can be looked at. The result has
// method "benchmark" and source run 0. Errors: a run that fails (its
// message), or one that yields no calibration.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"
#include "engine/layout/calibration.h"
#include "engine/layout/model_config.h"

namespace bubblescope::cli {

Result<layout::Calibration> benchmarkCalibration(const layout::ModelConfig& model, int32_t world,
                                                 const std::string& trace, int32_t steps);

}  // namespace bubblescope::cli
