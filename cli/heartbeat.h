// Heartbeats: a rank started by `run` tells the launcher that it lives and
// how far it got, for the hang watchdog (hang_watchdog.h).
//
// Contract: startHeartbeat(rank) starts a detached thread that prints the
// line "bubblescope-heartbeat rank=R step=S" on stdout every kHeartbeatMs,
// S being the last value given to noteStepDone() (-1 before the first). A
// stopped or frozen process prints none; a rank stuck inside a step keeps
// printing the same S. `run` consumes these lines; they are not shown.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace bubblescope::cli {

inline constexpr int kHeartbeatMs = 500;

void startHeartbeat(int rank);
void noteStepDone(int64_t step);

struct HeartbeatLine {
  int rank = 0;
  int64_t step = -1;
};
// The heartbeat a line holds, or nothing when it is not one.
std::optional<HeartbeatLine> parseHeartbeat(const std::string& line);

}  // namespace bubblescope::cli
