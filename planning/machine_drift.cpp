#include "planning/machine_drift.h"

#include <cmath>
#include <cstdio>
#include <utility>

#include "planning/contention.h"

namespace bubblescope::layout {

Calibration withMachineDrift(Calibration c, double drift) {
  return withSingleEntry(std::move(c), kContentionPart, kMachineDriftOp, drift);
}

std::optional<double> recordedMachineDrift(const Calibration& c) {
  for (const OpCostEntry& e : c.ops) {
    if (e.part == kContentionPart && e.op == kMachineDriftOp && std::isfinite(e.wallNs)) {
      return e.wallNs;
    }
  }
  return std::nullopt;
}

std::string machineDriftWarning(const Calibration& c) {
  const std::optional<double> drift = recordedMachineDrift(c);
  if (!drift || std::fabs(*drift) <= kMachineDriftWarning) return "";
  char text[256];
  std::snprintf(text, sizeof text,
                "the machine ran the calibration's speed reference %.1f%% %s at its end than "
                "at its start: a prediction from it is as uncertain as that; calibrate again "
                "when the machine is steady",
                100 * std::fabs(*drift), *drift > 0 ? "slower" : "faster");
  return text;
}

}  // namespace bubblescope::layout
