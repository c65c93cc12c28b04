// The prediction of a layout from a stored calibration, as `simulate
// --calibration`, `plan` and `bench predict` use it (docs/prediction.md).
#pragma once

#include <string>

#include "common/result.h"
#include "planning/prediction.h"
#include "storage/simulated_run.h"

namespace bubblescope::cli {

// Loads calibration `calibrationId` (0: the newest) of trace file `path` and
// predicts `layout`; warnings say when the calibration was measured on
// another machine (host name or core count) or model. `options`: what the
// prediction is for (a background load, planning/prediction.h).
Result<layout::Prediction> predictFromFile(const layout::Layout& layout, const std::string& path,
                                           int64_t calibrationId,
                                           const layout::PredictOptions& options = {});

// Step time, tokens/s, bubble per stage beside its formula, exposed
// communication per dimension, memory per stage, and the warnings.
std::string predictionToText(const layout::Layout& layout, const layout::Prediction& p);

// Options that write the prediction as a simulated run (ns units, per-op
// costs, predicted memory samples).
storage::SimulatedRunOptions predictedRunOptions(const layout::Prediction& p);

}  // namespace bubblescope::cli
