// The machine's own drift while a calibration was taken (issue 35 point 4;
// docs/prediction.md, "Calibration"): `calibrate --model` runs its first
// layout again after all the others, and the second run's step over the
// first's, minus 1, is stored with the calibration (part kContentionPart,
// op kMachineDriftOp, micro-batch size 0, the signed ratio in both cost
// columns). A VM whose neighbours come and go can run the same layout a
// third slower or faster within minutes (docs/benchmarks.md, session 14);
// a calibration taken across such a change mixes both speeds, which no
// model of the layout can take out, so a prediction from one says so.
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

// "the machine ran the calibration's first layout 12.3% slower after its
// other runs than before them: its costs mix both speeds; calibrate again
// when the machine is steady" when |drift| > kMachineDriftWarning; "" else.
std::string machineDriftWarning(const Calibration& c);

}  // namespace bubblescope::layout
