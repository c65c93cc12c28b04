// How long a GUI test waits for something the app does on its own (a worker
// thread, a timer, a child process) before it calls it a hang. A deadline
// only, never a claim about speed: a condition met sooner returns at once,
// and on a busy machine the work waits for a core (docs/testing.md).
#pragma once

namespace bubblescope::testing {

inline constexpr int kHangMs = 60000;

}  // namespace bubblescope::testing
