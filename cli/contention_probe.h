// measureBackground(): how many busy threads of other work this machine
// runs now (planning/contention.h; docs/prediction.md, "Background load").
//
// C threads (C = the online cores) spin for `wallNs` of wall time; each
// one's CPU time over that wall time is the share of a core it got, and
// with n = C threads B = C / mean share − C (layout::backgroundFromShare).
// It costs `wallNs` of every core: benches call it right before what they
// predict, so the prediction is made for the load the run will meet.
// Errors: wallNs outside 1 ms .. 10 s, a thread that cannot start or got
// no CPU time.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"

namespace bubblescope::cli {

struct BackgroundLoad {
  int32_t cores = 0;   // threads spun: this machine's online cores
  double share = 0;    // their mean CPU time / wall time
  double background = 0;  // B
};

Result<BackgroundLoad> measureBackground(int64_t wallNs = 300'000'000);

// The --background option of simulate and plan: "measure" (the probe, its
// reading said on stderr as "background: B busy threads of other work
// (measured: ...)"), or busy threads from 0 to 1e6. Errors: anything else
// ("--background: expected 'measure' or a number ..."), a failed probe.
Result<double> backgroundOption(const std::string& text);

}  // namespace bubblescope::cli
