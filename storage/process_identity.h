// Identity of a process, to tell whether a run's writer is still alive.
//
// A pid alone is not enough (pids are reused), so the writer also records
// its start time in clock ticks since boot (/proc/PID/stat, field 22).
#pragma once

#include <cstdint>
#include <string>

namespace bubblescope::storage {

struct ProcessIdentity {
  std::string host;
  int64_t pid = 0;
  int64_t startTicks = 0;
};

ProcessIdentity currentProcess();
// A process of this host (startTicks 0 when it does not run).
ProcessIdentity processIdentityOf(int64_t pid);
std::string currentHostName();

// Liveness of a recorded process, seen from this machine: a zombie (ended,
// not yet reaped by its parent) is gone.
enum class Liveness { kAlive, kGone, kUnknown /* another host */ };
Liveness livenessOf(const ProcessIdentity& process);

int64_t unixNowNs();

}  // namespace bubblescope::storage
