// renderAscii(): a schedule drawn as text, one row per stage, one cell per
// time unit, as the papers draw them.
//
// The schedule is simulated under unitCosts() (every chunk op one unit, no
// communication cost). A cell shows the op letter and micro-batch: F3 forward,
// B3 backward (input half for split schedules), W3 weight gradient, and for
// interleaved schedules the chunk as a letter: F3b is micro-batch 3, chunk 1.
// Idle cells are '.'. Step-level ops (gradient collective, optimizer) take no
// time under unit costs and are not drawn.
#pragma once

#include <string>

#include "common/result.h"
#include "engine/layout/schedule.h"

namespace bubblescope::layout {

// Example, 1f1b p=2 m=3:
//   stage 0 | F0 F1 .  B0 F2 B1 .  B2
//   stage 1 | .  F0 B0 F1 B1 F2 B2 .
// Errors: whatever simulate() reports for an invalid schedule.
Result<std::string> renderAscii(const Schedule& schedule);

}  // namespace bubblescope::layout
