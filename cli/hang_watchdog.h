// HangWatchdog: finds the rank that hangs a job, from the heartbeats its
// ranks print (heartbeat.h), for `run --hang-timeout`.
//
// Contract: a rank has made no progress when its completed step has not
// changed for `timeoutMs` (a stopped or frozen rank also sends no
// heartbeat at all). Watching starts with the job's first heartbeat, so
// start-up (MPI, model initialisation) is not timed. When ranks wait on a
// hung peer, they stop progressing too; the one named is the first of: a
// rank that went silent (oldest heartbeat), else the rank with the lowest
// completed step, else the lowest rank id. A hang is reported once the rank
// named has itself made no progress for `timeoutMs` (so the stall reported
// is never below the timeout), or, should that rank keep progressing, once
// another rank has made none for twice the timeout: then that one is named.
//
// With `watchCollector`, the job's trace collector (MPI rank worldSize, which
// also beats, always with step -1) is watched for silence alone: it completes
// no steps, but a stopped or frozen collector sends no heartbeat, and once it
// has been silent for `timeoutMs` it is named (Hang::collector), the ranks
// being checked first.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bubblescope::cli {

class HangWatchdog {
 public:
  HangWatchdog(int worldSize, int64_t timeoutMs, bool watchCollector = false);

  // Whether `line` is a heartbeat (then it is not for the user).
  bool scan(const std::string& line, int64_t nowMs);

  struct Hang {
    int rank = 0;
    int64_t stalledMs = 0;  // since its last progress
    int64_t lastStep = -1;  // its last completed step (-1: none)
    bool collector = false;  // the trace collector (rank == worldSize), silent
  };
  // The hung rank, once it has made no progress for the timeout.
  std::optional<Hang> check(int64_t nowMs) const;

 private:
  std::optional<Hang> checkRanks(int64_t nowMs) const;
  struct RankState {
    int64_t step = -1;
    int64_t progressMs = 0;  // when `step` last changed (or watching began)
    int64_t heardMs = 0;     // its last heartbeat (or watching began)
  };
  int64_t timeoutMs_;
  bool watching_ = false;
  std::vector<RankState> ranks_;
  bool watchCollector_;
  RankState collector_;
};

// What the watchdog's error says the hung rank last did: its last span in the
// trace (`span`, "name (step S[, micro-batch M])") when one reached it, else
// its last completed step from the heartbeats ("after step S"), else, when it
// was stopped before either reached `run` (a heartbeat comes every
// kHeartbeatMs and spans ship in batches, so a fast rank can do steps before
// either is seen), "none yet (it reported no completed step)".
std::string lastProgressText(const std::string& span, int64_t lastStep);

}  // namespace bubblescope::cli
