// predictLayout(): a layout's step predicted from a calibration
// (docs/prediction.md): the schedule simulator over the layout's own op lists
// (scheduleFor, the lists the executor runs), each op costed from the
// calibration's measured layer costs plus alpha-beta times of the
// collectives the op runs.
//
// Per op of stage k (chunk c holds the layers stageSplit gives it):
//  - Forward: the chunk's parts' forward costs (embedding on virtual stage 0,
//    head on the last), plus per layer 2 tp all-reduces of b·T·C fp32
//    (Megatron-LM f/g) when tp > 1, plus a ZeRO-3 all-gather of the chunk's
//    parameters;
//  - Backward (fused) / BackwardInput / BackwardWeight: the same with the
//    backward ops (2 tp all-reduces on B; ZeRO-3's second gather on the
//    backward that produces weight gradients); with recompute, the
//    forward again ("recompute" costs, or forward's when not measured);
//  - a send: the pp p2p time of b·T·C fp32;
//  - the gradient collectives: ZeRO 0 the reduction of every bucket as the
//    layout's grad compression and all-reduce algorithm send it
//    (gradReductionCost, grad_reduction_cost.h), ZeRO 1 a
//    reduce-scatter of the stage's gradients, ZeRO 2/3 a reduce-scatter of
//    one chunk's per ReduceScatterGrads(mb, chunk); nothing when dp = 1;
//    with the calibration's RunFormat::overlapsGradReduction (the cluster
//    model), ZeRO 0's buckets reduce behind the stage's last backward and
//    only the rest is waited for (prediction.cpp, overlappedReductionNs);
//  - OptimizerStep: the optimizer's cost per parameter × the parameters this
//    rank updates (Ψ_rank, /dp under ZeRO >= 1), plus the step's time
//    outside ops per parameter × the parameters it holds, plus the step's
//    8-byte all-reduces (gradient norm over pp and tp, loss over pp and dp);
//  - AllGatherParams (ZeRO 1/2): an all-gather of the stage's parameters.
//  - expert parallelism (ep > 1, expert_parallel_cost.h): each pass of a
//    MoE block adds its all-to-alls (the "ep" fit: 3 forward and in a
//    recompute, 2 in B or the fused backward); a rank holds 1/ep of the
//    experts, whose gradients are reduced over their expert-data-parallel
//    group (dp / ep ranks) apart from the shared ones over dp; the optimizer
//    adds the experts' gradient-norm all-reduce over ep.
// Each collective uses the fit of the link its dimension crosses where the
// layout's hosts place the ranks (link_class.h: other_host when a group of
// the dimension spans hosts; same_host without hosts); a fit of the other
// link stands in when that one was not measured, with a warning.
// With more than one rank every compute cost (layers, optimizer, time
// outside ops) is multiplied by the calibration's straggler factor: the
// ranks meet at their collectives and transfers, so they run at the slowest
// one's pace. Times are wall ns, or thread-CPU ns when the calibration's run was
// oversubscribed (Calibration::oversubscribed) or the prediction is made for
// a background load (PredictOptions::background, contention.h: CPU ns x the
// calibration's own overhead x the stretch of ranks and background). When the layout puts more
// ranks on a host than the calibrated machine has cores (Calibration::cores;
// 0 for a hardware profile: no limit), the ranks time-share the cores
// (core_sharing.h): every compute cost is multiplied by ranks / cores of the
// busiest host (a pipeline with every rank on one host is simulated
// time-shared instead, time_sharing.h: a stage waiting in a bubble leaves
// its cores to the others), the straggler factor is the one measured among ranks sharing
// cores when the calibration has it, the collectives of the step's end
// (gradient reduction, ZeRO-1's, the optimizer's) take the calibration's
// shared_cores fits (unless the calibration itself was oversubscribed: its
// own fits were measured so) while those between compute ops keep their
// link's (but tp's all-reduces take tp's own shared_cores fit when measured),
// and
// the prediction warns that it predicts an oversubscribed run.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "planning/activation_bytes.h"
#include "planning/calibration.h"
#include "planning/grad_reduction_cost.h"
#include "engine/layout/layout.h"
#include "planning/simulator.h"

namespace bubblescope::layout {

struct Prediction {
  Schedule schedule;
  Simulation simulation;  // in ns
  OpCosts opCostsNs;      // [stage][op] the durations simulated
  double p2pNs = 0;       // one pipeline transfer
  double recvWakeNs = 0;  // a blocked receive's wake-up after it (CostModel::recvWake)
  double stepNs = 0;
  double tokensPerSecond = 0;
  // Per stage, what `report` measures as its bubble, (wait + idle) / step:
  // the simulation's idle plus the time of its ops that no span covers (the
  // step's time outside ops, ZeRO 2/3's bucket work), over the step.
  std::vector<double> bubble;
  std::map<std::string, double>
      exposedCommNs;  // per dim ("dp", "tp", "pp", "zero", "ep"), per step, the slowest stage
  std::vector<double> memoryBytes;      // per stage: model states (kept + transient) + activations
  std::vector<double> activationBytes;  // per stage: peak in-flight activations
  // Parts not measured, calibration mismatches. A cost the calibration did
  // not measure and the prediction filled in (another dimension's fit, half
  // an all-reduce, 0, a built-in constant, layer costs scaled to another tp)
  // is a warning that begins "no " (isGuess), and no other warning does.
  std::vector<std::string> warnings;
  // ZeRO 0's data-parallel gradient reduction of the slowest stage, per step:
  // its collectives (in exposedCommNs["dp"]), encoding compute, bytes and
  // compression ratio (grad_reduction_cost.h); zero when dp = 1 or ZeRO > 0.
  GradReductionCost gradReduction;
};

// What a prediction is for beyond the layout.
struct PredictOptions {
  // Other work's busy threads on each host while the run runs (contention.h;
  // measured by cli/contention_probe.h). Set: compute is predicted from
  // thread CPU time x the calibration's own overhead (ownOverhead) x
  // max(1, (ranks + background) / cores), so a calibration taken under load
  // predicts what a quiet one does, for the load given. Unset: the
  // calibration's wall times as measured (CPU times when it was
  // oversubscribed), stretched by ranks / cores only.
  std::optional<double> background;
};

// Errors: an invalid layout ("invalid layout: ..." as run says), a
// calibration without forward and backward costs of the model's parts.
Result<Prediction> predictLayout(const Layout& layout, const Calibration& calibration,
                                 const PredictOptions& options = {});

}  // namespace bubblescope::layout
