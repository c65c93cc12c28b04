// The text and JSON form of a calibration (what `calibrate` prints).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "planning/calibration.h"

namespace bubblescope::analysis {

// Two tables: per-op costs (ms per micro-batch; optimizer ns per parameter)
// and the alpha-beta fits (alpha in us, bandwidth 1/beta in GB/s).
std::string calibrationToText(const layout::Calibration& c);
nlohmann::json calibrationToJson(const layout::Calibration& c);

}  // namespace bubblescope::analysis
