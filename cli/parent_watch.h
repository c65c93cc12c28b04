// A rank of a `run` ends itself when what started it is gone: mpirun (its
// parent: after mpirun dies the rank is re-parented) or the `run` process
// itself (the launcher; on this host only).
//
// Contract: watchParent() starts a detached thread that checks every
// kParentPollMs; once either is gone it prints one line,
// "error: rank R: <who> is gone; ending this rank", and ends the process
// with _exit(kParentGoneExitCode) without unwinding (the other threads may
// be blocked in a collective whose peers are dead). A trace's run then reads
// interrupted: its writer is gone without ending it.
#pragma once

#include <optional>
#include <string>

#include "common/result.h"
#include "storage/process_identity.h"

namespace bubblescope::cli {

inline constexpr int kParentPollMs = 200;
inline constexpr int kParentGoneExitCode = 3;

// "HOST:PID:TICKS": how `run` names itself to the ranks (--launcher).
std::string launcherArgument(const storage::ProcessIdentity& launcher);
Result<storage::ProcessIdentity> parseLauncherArgument(const std::string& text);

void watchParent(int rank, std::optional<storage::ProcessIdentity> launcher);

}  // namespace bubblescope::cli
