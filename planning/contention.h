// Contention: what other work on a host costs a run's compute (issue 35,
// point 4; docs/prediction.md, "Background load").
//
// The model. A host of C cores runs the job's R busy ranks beside B threads
// of other work that want a core all the time (the background, in busy-
// thread equivalents: a thread busy half the time counts 1/2, one at nice 19
// about nothing). The scheduler shares the cores evenly among the R + B, so
// an op that needs t ns of its thread's CPU takes
//     wall = rho · t · max(1, (R + B) / C)
// where rho is what the job itself adds (the trace collector, the
// communicator's worker, a rank waking from a wait) — measured, not assumed:
// the calibration's compute ops' wall over CPU time divided by the stretch
// of the background it was measured under. Predicting from thread CPU time
// this way makes a calibration taken under load predict what one taken on a
// quiet machine predicts, and follows the load the prediction is made for.
//
// B itself is measured (cli/contention_probe.h): n threads that spin for a
// while each get share = C / (n + B) of a core when n + B > C, so
// B = C / share − n. With n = C threads any B > 0 shows.
//
// A calibration records the background it was measured under as an op
// entry (part kContentionPart, op kBackgroundOp, micro-batch size 0, the
// count of threads in both cost columns); one without it is taken as
// measured with rho = 1 (its CPU time stands for the wall of an op on a
// core of its own).
// Pure; no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "planning/calibration.h"

namespace bubblescope::layout {

inline constexpr const char* kContentionPart = "contention";
inline constexpr const char* kBackgroundOp = "background";
// The measuring run's compute op spans' wall over CPU time (a ratio in both
// cost columns; storage/analysis/run_calibration.cpp).
inline constexpr const char* kOpStretchOp = "op_stretch";

// B from a probe: `threads` busy threads on `cores` cores each got `share`
// (CPU time / wall time) of a core. 0 when they had a core each (share >= 1)
// or the inputs are not finite and positive.
double backgroundFromShare(double share, int32_t threads, int32_t cores);

// max(1, (ranks + background) / cores); 1 when cores <= 0 (unknown: no
// limit) or background is not finite.
double computeStretch(int32_t ranks, double background, int32_t cores);

// The background c was measured under (its kBackgroundOp entry), nullopt
// when it has none.
std::optional<double> recordedBackground(const Calibration& c);

// c with its background set to `background` (the entry replaced, not
// repeated).
Calibration withBackground(Calibration c, double background);

// How much the calibration's runs' compute was stretched: its kOpStretchOp
// entry (the op spans' wall over CPU time, the time between layers
// included), else the wall over CPU time summed over its block forward and
// backward entries; 1 without CPU times (or when the ratio is not finite).
double measuredStretch(const Calibration& c);

// rho of the model above: measuredStretch(c) divided by
// computeStretch(c.ranksPerHost, recorded background, c.cores); 1 without
// a recorded background.
double ownOverhead(const Calibration& c);

// A per-parameter cost (Calibration::perParameterNs) in thread CPU time:
// its CPU column where the run measured one; the costs derived from gaps
// between spans (the step's time outside ops, ZeRO 2/3's bucket work) have
// none (both columns hold the wall time) and are divided by
// measuredStretch(c), so a background does not stretch them twice. nullopt
// when not measured.
std::optional<double> perParameterCpuNs(const Calibration& c, const std::string& part,
                                        const std::string& op);

}  // namespace bubblescope::layout
