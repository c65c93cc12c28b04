// writeSimulatedRun: a layout's step replayed by the schedule simulator
// (planning/simulator.h) and written into a trace file as a simulated
// run (runs.source = 'simulated'), so the app and the report show it like a
// measured one.
//
// What is simulated: the op lists of layout::scheduleFor(layout), the lists
// the executor runs, under `costs` (in units of unitNs). Every rank of the
// dp × tp × pp grid replays its stage's list; tensor-parallel collectives
// inside an op are not modelled. A receive is split as a real one is: the
// time before the message is in flight is a wait, the last t_comm (or less)
// the transfer. The gradient collective runs only when dp > 1 (as the
// runtime skips it for a one-rank group). Steps follow each other back to
// back; every rank's step window is the whole simulated step [0, makespan),
// the window the simulator's bubble fraction is over, so a stage's measured
// bubble equals the simulator's idle share. Losses are NaN (nothing trains).
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"
#include "engine/layout/layout.h"
#include "planning/simulator.h"
#include "storage/trace_writer.h"

namespace bubblescope::storage {

struct SimulatedRunOptions {
  layout::CostModel costs;     // per op, in units of unitNs
  int64_t unitNs = 1'000'000;  // one cost unit: 1 ms
  std::string name;            // empty: "simulated <schedule> pp<p> m<m>"
  // Per-op costs replacing `costs` (simulator.h), in units of unitNs: a
  // prediction's (planning/prediction.h). Empty: `costs` alone.
  layout::OpCosts opCosts;
  // Per-step per-op costs (each as opCosts): when not empty, one step is
  // simulated and written per entry, instead of layout.steps steps of
  // opCosts (the ideal-hardware replay, storage/analysis/ideal_replay.h).
  std::vector<layout::OpCosts> opCostsByStep;
  int32_t firstStep = 0;  // the number of the first step written
  // Samples "mem.<category>" per pipeline stage, written at the step's
  // start for every rank of the stage, so the report shows predicted memory.
  std::vector<std::vector<std::pair<std::string, double>>> memoryBytesByStage;
};

// Begins a run in `writer`, writes layout.steps steps (or one per
// opCostsByStep entry), back to back, finishes it; returns
// the run id. Errors: an invalid layout, a schedule the simulator rejects,
// costs below zero, or what the writer reports (the run is then failed).
Result<int64_t> writeSimulatedRun(TraceWriter& writer, const layout::Layout& layout,
                                  const SimulatedRunOptions& options);

}  // namespace bubblescope::storage
