// CoreSharing: what ranks that time-share a host's cores cost
// (docs/prediction.md, "More ranks than cores"; issue 35, point 1).
//
// R ranks busy on C < R cores each get C/R of a core: their compute takes
// s = R/C as long. Two things the ratio misses are measured by runs with
// more ranks than cores (calibrate's shared-cores runs, dp 2C on C cores,
// ZeRO 0 and 1) and stored in the calibration:
//  - collectives between time-shared ranks: each hop of a collective needs
//    its peer on a core (a descheduled peer costs a time slice, not the
//    link's microseconds), and the copies and sums themselves share the
//    cores, so the run's own alpha-beta fits are kept as link
//    kSharedCores (link_class.h) beside the same_host ones;
//  - the straggling of ranks that share cores (they run by turns, and meet
//    at each collective at the slowest one's pace): part kSharedCoresPart,
//    op "straggler", the straggler factor of that run
//    (Calibration::stragglerFactor's definition; a ratio in both cost
//    columns, micro-batch size 0).
// A prediction with s > 1 (prediction.h) multiplies compute by s (a
// pipeline on one host: by the time-shared simulation's stretch of each op,
// time_sharing.h; a tp group whose all-reduces take the shared-cores tp fit:
// by 1 + (s - 1) · paid), uses the
// shared-cores straggler factor instead of the calibration's (when
// measured), and costs the step's-end collectives of groups inside the host
// (which every rank waits in at once) with the kSharedCores fits; those
// between compute ops keep their own link's fit (a rank waiting there
// leaves its core to one that computes, which s already costs).
// Pure; no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "planning/calibration.h"

namespace bubblescope::layout {

inline constexpr const char* kSharedCoresPart = "shared_cores";
// Its op holding a tp layout's share of the stretch (CoreSharing::paid; a
// share in both cost columns).
inline constexpr const char* kTpStretchPaidOp = "tp_stretch_paid";
// Its op holding the wait at the step-end gradient collective, ns per
// parameter of a rank's stage (step_end_wait_fit.h).
inline constexpr const char* kStepEndWaitOp = "step_end_wait";
// The same wait in a pipeline whose ranks share the cores (fitted to
// calibrate's dp C x pp 2 run; a pipeline without it takes kStepEndWaitOp).
inline constexpr const char* kStepEndWaitPipelineOp = "step_end_wait_pipeline";

struct CoreSharing {
  int32_t ranks = 0;      // the most ranks placed on one host
  int32_t cores = 0;      // the calibrated machine's cores (0: unknown, no limit)
  double background = 0;  // other work's busy threads on the host (contention.h)
  // s = max(1, (ranks + background) / cores) (contention.h's
  // computeStretch; ranks / cores without a background), 1 without cores
  double ratio = 1;
  std::optional<double> straggler;  // measured among ranks sharing cores
  // The share of s - 1 the layout's compute pays, in [0, 1]: 1, but for a
  // tp layout whose per-layer all-reduces take the shared-cores tp fit
  // (hasSharedTpFit) the calibration's measured share (kTpStretchPaidOp,
  // fitTpStretchPaid in tp_stretch_fit.h): a tp rank waiting for its
  // descheduled partner leaves its core to another rank's compute, and
  // that fit already prices those waits; paying the whole s on top would
  // count them twice (dp2 x tp2 on 2 cores was predicted 1541 ms at m16,
  // measured 1296).
  double paid = 1;

  // More ranks than cores: the ranks share the cores among themselves.
  bool shared() const { return cores > 0 && ranks > cores; }
  // The stretch of the host's sharing: s.
  double computeFactor() const { return ratio; }
  // What every compute cost is multiplied by: 1 + (s - 1) · paid.
  double paidFactor() const { return 1 + (ratio - 1) * paid; }
};

// Whether c measured tp's all-reduces between ranks that time-share the
// cores (a tp fit of link kSharedCores, calibrate's shared-cores tp run).
bool hasSharedTpFit(const Calibration& c);

// The sharing of a layout whose ranks are on `placed` hosts (placedHosts,
// link_class.h), every host taken to have the calibrated machine's cores
// and `background` busy threads of other work (contention.h; 0: none).
// The shared-cores straggler factor is its wall column whatever the costs
// are in (the unfairness of the ranks' turns on the cores, which thread CPU
// time cannot see); `tp`: the layout's tp degree (its share of the
// stretch, `paid`). A calibration from an oversubscribed run keeps paid 1
// (its fits stand for themselves).
CoreSharing coreSharingOf(const std::vector<std::string>& placed, const Calibration& c,
                          double background = 0, int32_t tp = 1);

// What a prediction says of the sharing ("" when nothing): with more ranks
// than cores "R ranks on a host of C cores: they share the cores
// (oversubscribed), so compute is predicted Sx slower (time-sharing)", with
// a background of at least half a busy thread "B busy threads of other work
// beside R ranks on a host of C cores: compute is predicted Sx slower";
// with `meanStretch` (a time-shared pipeline, time_sharing.h) the slowdown
// reads "Mx slower on average (Sx while every stage computes; ...)"; with
// a share paid < 1 (CoreSharing::paid) it says the share; `placed` (the
// stages placed on the cores as the scheduler does, core_placement.h), with
// meanStretch, says so: "Mx slower on average (placed as the scheduler
// does: a running rank keeps its core, a woken one joins the core of the
// rank that woke it; up to Ux for ranks sharing a core)", U = R - C + 1.
std::string coreSharingWarning(const CoreSharing& sharing,
                               std::optional<double> meanStretch = std::nullopt,
                               bool placed = false);

// `c` with what `shared` measured among ranks sharing cores: its same_host
// fits as kSharedCores fits (added where c has none of that dim,
// collective and group size) and its straggler factor as a
// kSharedCoresPart entry.
// `shared` must come from a run with more ranks than cores
// (Calibration::oversubscribed); otherwise c is returned unchanged.
Calibration withSharedCores(Calibration c, const Calibration& shared);

}  // namespace bubblescope::layout
