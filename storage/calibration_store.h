// The calibration tables of a trace file (schema v5; docs/trace-format.md,
// "Calibrations"): a layout::Calibration stored beside the runs it was
// measured from, so a file carries its machine's cost model.
//
// Contract: saveCalibration() creates the file (or migrates an older one)
// and inserts one calibration in one transaction: nothing is written when it
// fails. Readers accept any schema version; files before v4 hold none.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "planning/calibration.h"

namespace bubblescope::storage {

// Returns the new calibration's id.
Result<int64_t> saveCalibration(const std::string& path, const layout::Calibration& calibration);

// Every calibration of the file, oldest first.
Result<std::vector<layout::Calibration>> loadCalibrations(const std::string& path);

// Calibration `id`, or the newest when id is 0. Errors name the file and say
// that it holds no calibration (and how to make one) or no such id.
Result<layout::Calibration> loadCalibration(const std::string& path, int64_t id = 0);

}  // namespace bubblescope::storage
