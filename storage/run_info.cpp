#include "storage/run_info.h"

namespace bubblescope::storage {

const char* toString(RunStatus status) {
  switch (status) {
    case RunStatus::kRunning:
      return "running";
    case RunStatus::kFinished:
      return "finished";
    case RunStatus::kFailed:
      return "failed";
    case RunStatus::kStopped:
      return "stopped";
  }
  return "unknown";
}

const char* toString(RunHealth health) {
  switch (health) {
    case RunHealth::kRunning:
      return "running";
    case RunHealth::kFinished:
      return "finished";
    case RunHealth::kFailed:
      return "failed";
    case RunHealth::kStopped:
      return "stopped";
    case RunHealth::kInterrupted:
      return "interrupted";
  }
  return "unknown";
}

const char* sourceName(const RunInfo& info) {
  if (info.imported) return "imported";
  return info.simulated ? "simulated" : "measured";
}

}  // namespace bubblescope::storage
