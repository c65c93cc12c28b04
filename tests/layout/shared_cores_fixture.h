// Made-up calibrations the layout tests predict from, so every expected
// step follows from the model by hand (core_sharing_test,
// tp_stretch_fit_test, machine_drift_test).
#pragma once

#include <cstdint>
#include <string>

#include "planning/calibration.h"
#include "planning/link_class.h"

namespace bubblescope::layout {

inline constexpr double kFixtureMs = 1e6;

// The default model's layers at 1 ms forward and 2 ms backward per
// micro-batch, measured at tp `opTp` (embedding, head and optimizer free),
// on a host of `cores` cores (0: unknown) of 2 ranks; dp's all-reduce free
// and tp's 0.1 ms a call between ranks with a core each, dp's 1 ms a call
// at group 4 between ranks sharing cores.
inline Calibration sharedCoresCalibration(int32_t cores, int32_t opTp = 1) {
  Calibration c;
  c.model = defaultLayoutModel();
  // Move-assigned: GCC 12 at -O3 warns (-Wrestrict, a false positive) on
  // a literal assigned to this inlined string.
  c.host = std::string("h");
  c.cores = cores;
  c.ranksPerHost = 2;
  for (const char* part : {"block", "embedding", "head"}) {
    const double f = std::string(part) == "block" ? 1 * kFixtureMs : 0;
    c.ops.push_back({part, "forward", 1, opTp, f, f, 1});
    c.ops.push_back({part, "backward", 1, opTp, 2 * f, 2 * f, 1});
  }
  c.ops.push_back({"optimizer", "step", 0, 1, 0, 0, 1});
  c.links.push_back({"dp", kSameHost, "allreduce", 2, 0, 0.0, 1, 8, 8});  // free
  c.links.push_back({"tp", kSameHost, "allreduce", 2, 0.1 * kFixtureMs, 0.0, 1, 8, 8});
  // Between time-shared ranks a call costs 1 ms at group 4, whatever its size.
  c.links.push_back({"dp", kSharedCores, "allreduce", 4, 1 * kFixtureMs, 0.0, 1, 8, 8});
  return c;
}

// tp 2 × dp 2, m = 2: 4 ranks.
inline Layout tp2dp2() {
  Layout l;
  l.tp = 2;
  l.dp = 2;
  l.microBatches = 2;
  return l;
}

}  // namespace bubblescope::layout
