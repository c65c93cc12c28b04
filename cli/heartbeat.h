// Heartbeats: a rank started by `run` tells the launcher that it lives and
// how far it got, for the hang watchdog (hang_watchdog.h).
//
// Contract: startHeartbeat(rank) starts a detached thread that writes the
// line "bubblescope-heartbeat rank=R step=S" to stderr every kHeartbeatMs,
// S being the last value given to noteStepDone() (-1 before the first). A
// stopped or frozen process writes none; a rank stuck inside a step keeps
// writing the same S. Heartbeats stay off stdout, where rank 0's progress
// lines go (mpirun forwards a busy stream in chunks and could cut a line
// there), and each is one write(2) of a whole line, shorter than PIPE_BUF,
// so a pipe never splits it. `run` consumes these lines; they are not shown.
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
