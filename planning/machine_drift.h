// The machine's own drift while a calibration was taken (issue 35 point 4;
// docs/prediction.md, "Calibration"): `calibrate --model` runs its speed
// reference layout again after all the others (cli/calibrate_benchmark.h),
// and that run's step over the reference's first, minus 1, is stored with
// the calibration (part kContentionPart,
// op kMachineDriftOp, micro-batch size 0, the signed ratio in both cost
// columns). A VM whose neighbours come and go can run the same layout a
// third slower or faster within minutes (docs/benchmarks.md, session 14);
// calibrate scales its runs to one speed (cli/speed_track.h), but which
// speed a later run will meet is then anyone's guess, so a prediction from
// such a calibration says so.
// Pure; no I/O.
#pragma once

#include <optional>
#include <string>

#include "planning/calibration.h"

namespace bubblescope::layout {

inline constexpr const char* kMachineDriftOp = "machine_drift";

// Beyond it a prediction warns: the spread of one layout's step between
// two runs a minute apart on this machine when it was steady (2–4 %,
// docs/benchmarks.md), with room.
inline constexpr double kMachineDriftWarning = 0.05;

// c with its drift set (the entry replaced, not repeated).
Calibration withMachineDrift(Calibration c, double drift);

// The drift c recorded; nullopt when it has none (or a non-finite one).
std::optional<double> recordedMachineDrift(const Calibration& c);

// "the machine ran the calibration's speed reference 12.3% slower at its
// end than at its start: a prediction from it is as uncertain as that;
// calibrate again when the machine is steady" when |drift| >
// kMachineDriftWarning; "" else.
std::string machineDriftWarning(const Calibration& c);

}  // namespace bubblescope::layout
