// Calibration: a cost model of one machine (or cluster) for one model, from
// measurements (docs/prediction.md). It holds
//  - per-op compute costs of each layer slot ("embedding", "block", "head")
//    and op ("forward", "backward", "backward_input", "backward_weight",
//    "recompute") per micro-batch size and tensor-parallel degree, in wall
//    time and in thread CPU time, and the optimizer's cost per parameter
//    (part "optimizer", op "step", micro-batch size 0);
//  - the step's time outside every op (zeroing gradients, the gradient
//    norm's pass, bookkeeping) per parameter the rank holds (part "step",
//    op "other", micro-batch size 0);
//  - the straggler factor (part "step", op "straggler", micro-batch size 0;
//    a ratio >= 1, not ns): ranks doing the same work meet at their
//    collectives, so a step runs at its slowest rank's pace; the mean over
//    steps of the slowest rank's compute over the ranks' mean compute;
//  - ZeRO 2/3's gradient buckets (part kZeroBucketPart, micro-batch size
//    0), per gradient element of the stage and per micro-batch, from a run
//    with ZeRO >= 2: the time a rank spends outside its spans moving the
//    micro-batch's gradients into the reduce-scatter bucket and adding the
//    reduced shard (op kZeroBucketOp, the ranks' mean), and the slowest
//    rank's excess over that mean (op kZeroBucketSkewOp), which the others
//    wait in the micro-batch's reduce-scatter;
//  - per parallel dimension, link and collective, an alpha-beta fit (ZeRO
//    2/3's per-micro-batch reduce-scatters as kMicroBatchReduceScatter)
//    time = alpha + beta · bytes (Thakur, Rabenseifner, Gropp 2005).
// Stored in a trace file's calibration tables (storage/calibration_store.h).
//
// Pure value type; lookups interpolate linearly in the micro-batch size.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/layout/model_config.h"

namespace bubblescope::layout {

// The op cost entries of ZeRO 2/3's per-micro-batch gradient handling (ns
// per gradient element and micro-batch; Calibration::perParameterNs): the
// ranks' mean work and the slowest rank's excess over it.
inline constexpr const char* kZeroBucketPart = "zero";
inline constexpr const char* kZeroBucketOp = "bucket";
inline constexpr const char* kZeroBucketSkewOp = "bucket_skew";
// The collective of a LinkFit (dim "zero") fitted on ZeRO 2/3's
// reduce-scatters, one per micro-batch into a bucket allocated for it, apart
// from ZeRO 1's once-a-step "reduce_scatter": the same bytes take another
// time at that rhythm (docs/prediction.md, section 5).
inline constexpr const char* kMicroBatchReduceScatter = "reduce_scatter_micro_batch";
// The collective of a LinkFit (dim "zero") fitted on ZeRO-3's per-layer
// parameter all-gathers, which the ranks meet at twice per layer slot and
// micro-batch: fitted at the mean of each size's samples, like tp's
// all-reduces inside the layers (the step pays every gather's wait for the
// other rank), apart from ZeRO 1/2's once-a-step "all_gather".
inline constexpr const char* kMicroBatchAllGather = "all_gather_micro_batch";
// The collective of a LinkFit (dim "pp") that moves nothing: a pipeline
// receive that waited goes on alphaNs after its message's transfer (beta 0),
// the time the waiting rank takes to notice and get a core back, measured
// from a run's blocked receives (analysis/pipeline_hops.h; docs/prediction.md,
// "Waking from a receive").
inline constexpr const char* kReceiveWake = "p2p_wake";

// The cost of one op of one layer slot, per micro-batch (or, for the
// optimizer, per parameter), mean over the samples.
struct OpCostEntry {
  std::string part;  // "embedding", "block", "head", "optimizer"
  std::string
      op;  // "forward", "backward", "backward_input", "backward_weight", "recompute", "step"
  int32_t microBatchSize = 1;  // 0 for the optimizer
  int32_t tp = 1;              // tensor-parallel degree the cost was measured at
  double wallNs = 0;
  double cpuNs = 0;  // thread CPU time; equals wallNs when the run measured none
  int64_t samples = 0;

  bool operator==(const OpCostEntry&) const = default;
  // The same cost measured again: part, op, micro-batch size and tp.
  bool sameKey(const OpCostEntry& o) const {
    return part == o.part && op == o.op && microBatchSize == o.microBatchSize && tp == o.tp;
  }
};

// time(bytes) = alphaNs + betaNsPerByte · bytes for one collective kind
// ("allreduce", "reduce_scatter", "all_gather", "p2p") of one dimension ("dp",
// "tp", "pp", "zero") over one link ("same_host", "other_host") and group size.
struct LinkFit {
  std::string dim;
  std::string link;
  std::string collective;
  int32_t groupSize = 2;
  double alphaNs = 0;
  double betaNsPerByte = 0;
  int64_t samples = 0;
  int64_t minBytes = 0;
  int64_t maxBytes = 0;

  double timeNs(double bytes) const { return alphaNs + betaNsPerByte * bytes; }
  bool operator==(const LinkFit&) const = default;
  // The same fit measured again: dim, link, collective and group size.
  bool sameKey(const LinkFit& o) const {
    return dim == o.dim && link == o.link && collective == o.collective &&
           groupSize == o.groupSize;
  }
};

// How the costed run keeps and moves its tensors. The defaults are the
// engine's: fp32 everywhere (4-byte activations, parameters and gradients,
// 8 bytes of Adam moments per parameter) and recompute of a whole chunk from
// its input. A cluster calibration (cluster_cost.h) describes a
// Megatron-LM mixed-precision run: 2-byte activations, parameters and
// gradients, 12 bytes of fp32 master weights and moments per parameter
// (ZeRO, arXiv 1910.02054, K = 12), and recompute that keeps every layer's
// input and recomputes one layer at a time, with the data-parallel
// all-reduce overlapping the last backward.
struct RunFormat {
  double activationBytes = 4;  // per activation element (tp all-reduces, pp transfers, memory)
  double parameterBytes = 4;   // per parameter kept and gathered
  double gradientBytes = 4;    // per gradient element kept and reduced
  double optimizerBytes = 8;   // optimizer state per parameter
  bool recomputeEachLayer = false;
  // ZeRO 0's gradient buckets reduce in the background while the last
  // backward runs (NCCL on its own stream). Not assumed for the engine's
  // measured runs (docs/prediction.md, section 5).
  bool overlapsGradReduction = false;

  bool operator==(const RunFormat&) const = default;
};

struct Calibration {
  int64_t id = 0;              // its row in the trace file (0: not stored)
  std::string name;            // e.g. "from run 3"
  int64_t sourceRun = 0;       // the run it was extracted from (0: a benchmark)
  std::string method = "run";  // "run" or "benchmark"
  std::string host;            // the machine measured
  int32_t cores = 0;           // its cores
  int32_t ranksPerHost = 0;    // ranks that shared them while measuring
  ModelConfig model;
  std::string backend = "cpu";
  std::vector<OpCostEntry> ops;
  std::vector<LinkFit> links;
  RunFormat format;  // not stored in trace files: measured calibrations are the engine's

  // True when the measuring run had more ranks than cores: wall times are
  // stretched, so predictions use thread CPU times.
  bool oversubscribed() const { return cores > 0 && ranksPerHost > cores; }

  // The cost in ns of `op` of `part` at micro-batch size b and tp degree:
  // the entry measured at tp (or, if none, the nearest tp, scaled by its
  // tp / tp: compute splits over the tp group), linearly interpolated (or
  // extrapolated through the origin from one size) in b. nullopt when the
  // part and op were never measured.
  std::optional<double> opCostNs(const std::string& part, const std::string& op, int32_t b,
                                 int32_t tp, bool cpuTime) const;
  // What opCostNs(part, op, b, tp, ...) reads: the measured tp degree nearest
  // to tp and the micro-batch sizes measured at it (b between them is
  // interpolated, outside extrapolated). nullopt when never measured.
  struct OpCoverage {
    int32_t tp = 1;
    int32_t minSize = 0;
    int32_t maxSize = 0;
  };
  std::optional<OpCoverage> opCoverage(const std::string& part, const std::string& op,
                                       int32_t tp) const;
  // A cost per parameter (micro-batch size 0: "optimizer"/"step",
  // "step"/"other"), not scaled by tp; nullopt when not measured.
  std::optional<double> perParameterNs(const std::string& part, const std::string& op,
                                       bool cpuTime) const;
  // The straggler factor ("step"/"straggler"), 1 when not measured.
  double stragglerFactor(bool cpuTime) const;
  // The fit of `collective` on dim; falls back to another dimension's fit of
  // the same collective on the same link, then any link. nullptr when none.
  const LinkFit* linkFit(const std::string& dim, const std::string& collective,
                         const std::string& link = "same_host") const;
};

// Least-squares fit of time = alpha + beta · bytes over (bytes, ns) points.
// One distinct size: below 64 KiB all latency (alpha = mean ns, beta 0), from
// 64 KiB all bandwidth (alpha 0, beta = mean ns / bytes). A negative slope or intercept is clamped
// to 0 and the other term refitted. Requires at least one point.
LinkFit fitAlphaBeta(const std::vector<std::pair<double, double>>& bytesAndNs);

// Problems that make a calibration a poor fit for a model, one sentence each
// ("calibrated on model small, predicting tiny"; a mixture of experts
// calibrated with other expert settings, or on a dense model); empty when
// it matches.
std::vector<std::string> calibrationMismatches(const Calibration& c, const ModelConfig& model);

// What c's layer costs do not cover for a layout of `tp` and micro-batch
// size `microBatchSize`, one warning each: no layer costs measured at that
// tp (another tp's scaled), a size outside the measured ones (extrapolated
// linearly). Empty when c has no block forward cost at all.
std::vector<std::string> layerCoverageGaps(const Calibration& c, int32_t tp,
                                           int32_t microBatchSize);

// c with one step-level entry of `part` / `op` (micro-batch size 0, tp 1,
// one sample) holding `value` in both cost columns, replacing any earlier
// entry of that part and op: how a calibration stores a single fitted or
// recorded number (a background, a drift, a tp share, a step-end wait).
Calibration withSingleEntry(Calibration c, const std::string& part, const std::string& op,
                            double value);

// Whether an entry's cost columns are times (ns per op, per parameter or
// per element; the shared-cores step-end wait), not ratios (the straggler
// factor, the other shared-cores entries, contention's stretch and drift)
// or counts (a background's busy threads).
bool isTimeCost(const OpCostEntry& e);

// c with every time multiplied by `factor`: the time entries' both columns
// (isTimeCost) and each link fit's alpha and beta. What a run measured on a
// machine running 1/factor times as fast as it should be costed at
// (calibrate's speed references, cli/calibrate_benchmark.h).
Calibration withTimesScaled(Calibration c, double factor);

// One calibration from several (the runs of a micro-benchmark): a layer's
// cost (parts "embedding", "block", "head"; key part, op, micro-batch size,
// tp) the median over the calibrations that have it, wall and CPU time
// apart, its samples summed; one that a single calibration has, its cost
// times that calibration's pace against the others (the median, over the
// layer keys it shares with them, of the key's median over its own; 1
// without any); every other op cost and each link fit (dim,
// collective, link, group size) from the first calibration that has it;
// name, host, cores, model and backend from the first, ranksPerHost the
// largest. Empty input: an empty calibration. Most of `calibrate --model`'s
// runs measure the layers at micro-batch size 1 beside what they are for:
// on the 2-core VM one run's layers met a slow spell of the core (its own
// thread CPU time 6 % above the next run's), and two calibrations a minute
// apart, each taking its first run's, predicted every layout 9 % apart; the
// median over a calibration's eight such runs moves 0.5-2 % between them.
// ZB-H1's split backward is measured by one run only: a run 13 % slow in
// its forward had priced B and W 16 % above the other calibration's.
Calibration mergeCalibrations(const std::vector<Calibration>& parts);

// `merged` with every op cost `own` has replaced by own's, as measured (a
// run's advice completed by stored calibrations keeps the run's own costs
// over the merge's medians).
Calibration withOwnCosts(Calibration merged, const Calibration& own);

}  // namespace bubblescope::layout
