// `bubblescope --bench-teaching`: how fast the teaching lab follows a slider.
//
// Builds a TeachingLab offscreen (1600 x 900) at p = 8, m = 32 for each
// schedule (gpipe, 1f1b, interleaved with v = 2, zb-h1) and times frames: a
// frame is one slider value change (the B / F ratio), i.e. the schedule
// rebuilt, simulated and played back, the labels updated, and the whole lab
// rendered into an image. Prints `key: value` lines per schedule: ops,
// frame_ms_p50, frame_ms_p95, frame_ms_max (wall clock), frame_cpu_ms_p50,
// frame_cpu_ms_p95 (the thread's CPU time: what a frame costs on a loaded
// machine). Needs a QApplication.
#pragma once

#include <ostream>

namespace bubblescope::gui {

// Returns the process exit code.
int benchTeaching(std::ostream& out, int framesPerSchedule = 60);

}  // namespace bubblescope::gui
