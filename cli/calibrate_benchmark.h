// benchmarkCalibration(): `calibrate --model M --world N` without a run of
// the user's (docs/prediction.md, "Calibration"): a short micro-benchmark
// made of real, short runs of model M on this machine, each calibrated
// (analysis::calibrateFromRun) and merged into one calibration
// (layout::mergeCalibrations):
//  - the layers at micro-batch sizes 1, 2 and 4 (single rank; forward,
//    backward, recompute, optimizer);
//  - when N >= 2, the collectives: dp N with 256 KiB gradient buckets, ZeRO 0
//    (all-reduce) and ZeRO 1 (reduce-scatter, all-gather), so each has
//    several message sizes (the buckets, the last one's rest, the 8-byte
//    loss) for its alpha-beta fit; tp 2 (its per-layer all-reduces, layer
//    costs at tp 2) when the heads divide; pp 2 ZB-H1 (pipeline transfers,
//    split B and W costs) when the model has 2 layers or more; dp N ZeRO 2
//    (the gradient bucket work per micro-batch) and ZeRO 3 (the per-layer
//    parameter gathers) at the default buckets.
// With hosts (`calibrate --hosts a,b,...`) the same runs go to the hosts:
// the layers and every same-host run on the first host (its `same_host`
// fits), then, with two hosts or more, dp N (ZeRO 0 and 1) and pp 2 again
// with their ranks spread one by one over the hosts (round robin, N ranks
// over the first min(N, hosts) hosts), so their groups cross hosts: the
// `other_host` fits (the calibration classifies each sample by the hosts
// its ranks recorded, planning/link_class.h).
// Every run has m = 2 and `steps` steps and is written into `trace` (named
// "calibrate ..."), so what was measured can be looked at. The first run
// of more than one rank (else the first run) is the speed reference: its
// layout runs again every 4 runs after it ("speed reference ...") and
// last ("drift check ..."); each run's costs
// are scaled (layout::withTimesScaled) by the references' median step over
// the reference step at its place in the sequence (linear between the
// references around it), so a machine whose speed moves while calibrating
// gives one calibration at one speed instead of a mix; the tp share is
// fitted to the tp run's step scaled alike. The last reference's step over
// the first's, minus 1, is stored as the calibration's machine drift
// (planning/machine_drift.h). All three are printed. The result has
// method "benchmark" and source run 0. Errors: a run that fails (its
// message), or one that yields no calibration.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "planning/calibration.h"
#include "engine/layout/model_config.h"

namespace bubblescope::cli {

// Where the micro-benchmark runs: no hosts = this machine.
struct BenchmarkHosts {
  std::vector<std::string> hosts;  // "name" or "name:slots" (the slots are not used)
  std::vector<std::string> netIf;  // run's --net-if, passed on to every run
};

Result<layout::Calibration> benchmarkCalibration(const layout::ModelConfig& model, int32_t world,
                                                 const std::string& trace, int32_t steps,
                                                 const BenchmarkHosts& where = {});

// The shared-cores runs of the micro-benchmark (planning/core_sharing.h):
// dp 2C of `model` on this machine's C = c.cores cores, ZeRO 0 (m = 4) and
// ZeRO 1 (m = 2); (when the heads divide, dense models) tp 2 x dp C at
// m = 2, whose tp fits only are kept (tp's per-layer all-reduces between
// time-shared ranks); and (two layers or more) dp C x pp 2 1F1B at m = 4,
// whose pp fits only are kept (a blocked receive's wake-up between
// time-shared ranks); `steps` steps each, into `trace`, named "calibrate ...
// shared cores", added to c by layout::withSharedCores. The dp ZeRO 0, the
// tp and the pp run three times each and the run of the median step is
// kept (each fit the median of the three): their steps are fitted, the wait
// at the step-end all-reduce (planning/step_end_wait_fit.h; the pp run's a
// pipeline's own) and the share of the time-sharing stretch the tp run's
// compute paid (planning/tp_stretch_fit.h), each printed.
// None (c unchanged) with hosts, world < 2, or C outside 1..8. `bench
// predict` runs them too.
Status addSharedCores(layout::Calibration& c, const layout::ModelConfig& model, int32_t world,
                      const std::string& trace, int32_t steps, const BenchmarkHosts& where = {});

// What a shared-cores run's calibration contributes: all of it, but of the
// tp 2 x dp C run its tp fits only, of the dp C x pp 2 run its pp fits only
// (the dp runs measure the rest).
layout::Calibration sharedCoresPart(layout::Calibration part);

// `kept` (one of `runs`' calibrations, the runs of one layout) with each of
// its fits, op costs and link fits alike, the median of that fit over the
// runs where every run measured it (wall and CPU time, alpha and beta
// apart); a fit some run lacks stays kept's. calibrate runs ZeRO 2's and
// 3's runs, the tp run and the fitted shared-cores runs three times and keeps the run
// of the median step with these fits.
layout::Calibration withMedianFits(layout::Calibration kept,
                                   const std::vector<layout::Calibration>& runs);

// Whether a run's name is one of the shared-cores runs' (a calibration made
// from such runs keeps them apart: layout::withSharedCores).
bool isSharedCoresRun(const std::string& runName);

}  // namespace bubblescope::cli
