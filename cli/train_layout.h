// `bubblescope-cli train --layout FILE`: one rank of a parallel training run,
// started by mpirun or srun (usually through `bubblescope-cli run`).
#pragma once

#include <cstdint>
#include <string>

#include "cli/commands.h"
#include "engine/layout/layout.h"

namespace bubblescope::cli {

struct LayoutTrainArgs {
  std::string layoutFile;  // a layout file, or
  std::string layoutJson;  // the layout itself (how `run` passes it to every host)
  std::string trace;       // trace file rank 0 writes; empty: no tracing
  int64_t runId = -1;      // with trace: the run `run` began; -1: rank 0 begins one
  int32_t steps = -1;      // overrides the layout's steps when >= 0
  std::string backend;     // overrides the layout's backend when set
  std::string precision;   // overrides the layout's precision when set
  std::string launcher;    // "HOST:PID:TICKS" of the `run` that started it ("": none)
  std::string save;        // checkpoint written at the end by rank 0 ("": none)
  // The job's last MPI process is `run`'s trace collector (collected_job.h):
  // it writes the trace; no trainer opens the file.
  bool collected = false;
  // Testing: "RANK:STEP" makes that rank throw at the start of that step.
  std::string injectFailure;
};

// Contract: initialises MPI (MPI_THREAD_MULTIPLE) and finalises it. The
// ranks train on MPI_COMM_WORLD, or, with `collected`, on the trainers'
// communicator (collected_job.h) and ship their trace to the collector. A rank
// that fails prints "error: rank R: <why>" on stderr and aborts the job
// (MPI_Abort): the only way to free ranks blocked in a collective with it.
// Rank 0 prints progress and, at the end, every rank's memory. Every rank
// ends itself when mpirun or the launcher is gone (parent_watch.h).
ExitCode runLayoutTraining(const LayoutTrainArgs& args);

// Why the runtime cannot run `layout` (backend cuda: no usable GPU on this
// host, engine/backend_factory.h; bf16 on the cpu backend), or "" when it
// can. Every layout runs on a GPU. Probes the GPU only for backend cuda.
std::string unsupportedLayoutFeature(const layout::Layout& layout);

}  // namespace bubblescope::cli
