// The job `run` starts (mpirun or srun, and its ranks) as one process group
// that this process owns, with its output streamed through.
//
// Contract:
// - The launcher (argv[0]) gets stdin from /dev/null, a process group of its
//   own (a terminal's Ctrl-C reaches only this process, which decides what
//   happens), and SIGTERM when this process dies, even by SIGKILL
//   (PR_SET_PDEATHSIG): a job never outlives the `run` that started it.
// - SIGINT, SIGTERM and SIGHUP sent to this process while the job runs are
//   forwarded to the launcher's process group (mpirun ends its ranks); when
//   the job has not ended `stopGraceMs` later, or on a second signal, every
//   process of the job (the launcher and its descendants: OpenMPI gives each
//   rank a process group of its own) is killed with SIGKILL. After a stop, the job's output is no longer copied through
//   (mpirun's notes about the ranks it killed are noise to the user).
// - Each output line is handed to hooks.onLine, then copied to this
//   process's stdout or stderr unless onLine says not to.
// - hooks.shouldAbort can end a job that hangs (the watchdog).
// - Returns once the launcher has exited and, after a stop or an abort, once
//   no process of the job runs (bounded: 2 s after SIGKILL).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace bubblescope::cli {

struct JobExit {
  int exitCode = 0;         // 128 + signal when a signal ended the launcher
  int stopSignal = 0;       // the signal this process received and forwarded; 0: none
  std::string abortReason;  // why shouldAbort ended the job; "" when it did not
};

struct JobHooks {
  // Each output line (without its newline) before it is copied through;
  // false keeps the line from the user (e.g. a heartbeat).
  std::function<bool(const std::string& line, bool fromStderr)> onLine;
  // Asked at least every kJobTickMs while the job runs; a message aborts
  // the job at once (SIGKILL to its process group) and becomes abortReason.
  std::function<std::optional<std::string>()> shouldAbort;
  int stopGraceMs = 3000;  // after a stop signal, before SIGKILL
};

inline constexpr int kJobTickMs = 200;

Result<JobExit> runJobProcess(const std::vector<std::string>& argv, const JobHooks& hooks);

// A monotonic clock in milliseconds.
int64_t monotonicNowMs();

// "SIGINT", "SIGTERM", ... ("signal N" for others).
std::string signalName(int signal);

}  // namespace bubblescope::cli
