// Value structs that describe runs and ranks in a trace file.
#pragma once

#include <cstdint>
#include <string>

#include "trace_model/event.h"

namespace bubblescope::storage {

// Stored status of a run (runs.status): running until it ends; finished
// (every step done), failed (a rank failed or the watchdog found a hung
// rank; `error` says which) or stopped (on request: `run` got SIGINT,
// SIGTERM or SIGHUP and stopped the job; `error` names the signal).
enum class RunStatus { kRunning, kFinished, kFailed, kStopped };

// What a reader concludes about a run: a run whose status still says
// running but whose writer process is gone (or a zombie) is kInterrupted:
// it ended with nobody left to say how (e.g. its launcher was SIGKILLed).
enum class RunHealth { kRunning, kFinished, kFailed, kStopped, kInterrupted };

const char* toString(RunStatus status);
const char* toString(RunHealth health);

// What the writer stores when a run begins.
struct RunInfo {
  std::string name;        // free text, e.g. "dp2-zero1 tiny"
  std::string layoutJson;  // the layout as the launcher saw it ("{}" if none)
  std::string modelJson;   // the model config ("{}" if none)
  std::string backend = "cpu";
  int32_t worldSize = 1;
  bool simulated = false;  // true for the simulator's replays
  bool imported = false;   // true for another tool's traces (import, docs/import.md)
};

// runs.source: "measured", "simulated" or "imported".
const char* sourceName(const RunInfo& info);

// A run as a reader sees it.
struct RunRecord {
  int64_t id = 0;
  RunInfo info;
  RunStatus status = RunStatus::kRunning;
  RunHealth health = RunHealth::kRunning;
  std::string error;          // why it failed (empty otherwise)
  int64_t createdUnixNs = 0;  // wall clock when it began
  int64_t endedUnixNs = 0;    // 0 while running
  std::string writerHost;
  int64_t writerPid = 0;
  int64_t eventCount = 0;
};

// A rank of a run: part of the trace model (trace_model/event.h).
using RankInfo = trace_model::RankInfo;

}  // namespace bubblescope::storage
