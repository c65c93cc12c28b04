#include "planning/prediction.h"

#include <algorithm>
#include <cmath>

#include "engine/layout/global_batch.h"
#include "engine/layout/stage_split.h"
#include "planning/contention.h"
#include "planning/core_sharing.h"
#include "planning/expert_parallel_cost.h"
#include "planning/expert_parallel_volume.h"
#include "planning/formulas.h"
#include "planning/grad_reduction_cost.h"
#include "planning/link_class.h"
#include "planning/link_costs.h"
#include "planning/machine_drift.h"
#include "planning/time_sharing.h"

namespace bubblescope::layout {
namespace {

// What one virtual stage (a chunk) holds.
struct ChunkParts {
  int32_t firstLayer = 0;
  int32_t layers = 0;
  bool embedding = false;
  bool head = false;
  double parameters = 0;  // on one tp rank (with ep: its share of the experts)
  ChunkParameters split;  // parameters as shared + this rank's experts
};

// The straggler factor of ranks doing the same work: among ranks that
// share cores the one measured so (core_sharing.h), else the calibration's.
double stragglerOf(const Calibration& c, const CoreSharing& sharing) {
  if (sharing.shared() && sharing.straggler) return *sharing.straggler;
  return c.stragglerFactor(c.oversubscribed());
}

class Predictor {
 public:
  Predictor(const Layout& l, const Calibration& c, const PredictOptions& o)
      : l_(l),
        c_(c),
        cpu_(c.oversubscribed() || o.background.has_value()),
        background_(o.background.has_value()),
        placed_(placedHosts(l)),
        sharing_(coreSharingOf(placed_, c, o.background.value_or(0.0), l.tp)),
        links_(l, c, placed_, sharing_.shared() && !c.oversubscribed(),
               [this](std::string w) { warn(std::move(w)); }),
        straggler_(l.dp * l.tp * l.pp > 1 ? stragglerOf(c, sharing_) : 1.0),
        overhead_(o.background ? ownOverhead(c) : 1.0),
        computeScale_(sharing_.paidFactor() * overhead_),
        timeShared_(l.pp > 1 && sharing_.shared() && sharing_.ranks == l.worldSize()) {}

  Result<Prediction> run() {
    BS_RETURN_IF_ERROR(validate(l_));
    for (std::string& w : calibrationMismatches(c_, l_.model)) warn(std::move(w));
    if (std::string w = machineDriftWarning(c_); !w.empty()) warn(std::move(w));
    BS_ASSIGN_OR_RETURN(p_.schedule, scheduleFor(l_));
    BS_ASSIGN_OR_RETURN(const std::vector<int32_t> split,
                        stageSplit(l_.model, l_.pp, l_.virtualChunks, l_.stageLayers));
    const int32_t vs = static_cast<int32_t>(split.size());
    for (int32_t v = 0, first = 0; v < vs; first += split[v], ++v) {
      ChunkParts part;
      part.firstLayer = first;
      part.layers = split[v];
      part.embedding = v == 0;
      part.head = v == vs - 1;
      part.split = chunkParameters(l_, first, part.layers, part.embedding, part.head);
      part.parameters = part.split.total();
      chunks_.push_back(part);
    }
    BS_RETURN_IF_ERROR(checkMeasured());
    // Layer costs from another tp or outside the measured sizes are
    // estimates: said (issue 35: a prediction says what it did not measure).
    for (std::string& w : layerCoverageGaps(c_, l_.tp, l_.microBatchSize)) warn(std::move(w));
    actBytes_ = c_.format.activationBytes * l_.microBatchSize * l_.model.seqLen * l_.model.hidden;
    p_.p2pNs = l_.pp > 1 ? collectiveNs("pp", "p2p", actBytes_, 1) : 0.0;
    buildOpCosts();
    CostModel base;  // every op has its own cost; the base only fills gaps
    base.comm = p_.p2pNs;
    p_.recvWakeNs = l_.pp > 1 ? links_.receiveWakeNs() : 0.0;
    base.recvWake = p_.recvWakeNs;
    if (timeShared_) {
      TimeSharing sharing{c_.cores, static_cast<double>(l_.dp) * l_.tp, sharing_.background,
                          sharing_.paid};
      // One rank a stage, no other work: placed as the scheduler does
      // (core_placement.h), not shared evenly.
      placedStages_ = sharing.ranksPerStage == 1 && sharing.background == 0;
      if (placedStages_) sharing.model = CoreModel::kPlacement;
      BS_ASSIGN_OR_RETURN(TimeSharedSimulation shared,
                          simulateTimeShared(p_.schedule, base, fixedNs_, workNs_, sharing));
      p_.simulation = std::move(shared.simulation);
      p_.opCostsNs = std::move(shared.durations);
    } else {
      BS_ASSIGN_OR_RETURN(p_.simulation, simulate(p_.schedule, base, p_.opCostsNs));
    }
    sayTimeSharing();
    finish();
    return std::move(p_);
  }

 private:
  void warn(std::string w) {
    if (std::find(p_.warnings.begin(), p_.warnings.end(), w) == p_.warnings.end()) {
      p_.warnings.push_back(std::move(w));
    }
  }

  // Said when the host's cores are shared (core_sharing.h): for a
  // time-shared pipeline with the mean stretch over the step's work.
  void sayTimeSharing() {
    std::optional<double> mean;
    if (timeShared_) mean = meanStretch(p_.opCostsNs, fixedNs_, workNs_);
    if (std::string w = coreSharingWarning(sharing_, mean, placedStages_); !w.empty()) {
      warn(std::move(w));
    }
  }

  Status checkMeasured() const {
    for (const char* op : {"forward", "backward"}) {
      if (!c_.opCostNs("block", op, 1, 1, false)) {
        return Status::invalidArgument(std::string("the calibration has no ") + op +
                                       " cost of a block: calibrate from a run that trained");
      }
    }
    return Status::ok();
  }



  // One part's op cost; a missing one is estimated and said so.
  double partNs(const char* part, const std::string& op) {
    const int32_t b = l_.microBatchSize;
    if (auto ns = c_.opCostNs(part, op, b, l_.tp, cpu_)) return *ns;
    // Split halves from the fused backward: B and W each half (Qi et al.).
    if (op == "backward_input" || op == "backward_weight") {
      if (auto ns = c_.opCostNs(part, "backward", b, l_.tp, cpu_)) {
        warn(std::string("no ") + op + " cost of " + part + " measured: half its backward");
        return *ns / 2;
      }
    }
    if (op == "recompute") {
      if (auto ns = c_.opCostNs(part, "forward", b, l_.tp, cpu_)) return *ns;
    }
    if (op == "backward") {
      auto bi = c_.opCostNs(part, "backward_input", b, l_.tp, cpu_);
      auto bw = c_.opCostNs(part, "backward_weight", b, l_.tp, cpu_);
      if (bi && bw) return *bi + *bw;
    }
    warn(std::string("no ") + op + " cost of " + part + " measured: taken as 0");
    return 0.0;
  }

  // With more than one rank, compute runs at the slowest rank's pace
  // (Calibration::stragglerFactor).
  double chunkComputeNs(const ChunkParts& c, const std::string& op) {
    double ns = c.layers * partNs("block", op);
    if (c.embedding) ns += partNs("embedding", op);
    if (c.head) ns += partNs("head", op);
    if (!timeShared_) return ns * straggler_ * computeScale_;
    // At a whole core's pace: the time-shared simulation stretches it.
    ns *= straggler_ * overhead_;
    opWorkNs_ += ns;
    return ns;
  }

  // The optimizer over the parameters this rank updates, the step's time
  // outside ops over the parameters it holds, and the step's small
  // all-reduces: the gradient norm over pp and tp, the loss over pp and dp.
  double optimizerStepNs() {
    const ChunkParameters p = stageParameterSplit();
    const bool sharded = l_.zeroStage != ZeroStage::kNone && l_.dp > 1;
    const double updated =
        sharded ? p.shared / l_.dp + p.experts / expertDataParallelSize(l_) : p.total();
    const double scale = straggler_ * computeScale_;
    const double outside = p.total() * perParameterCostNs("step", "other").value_or(0.0) * scale;
    untracedNs_[stage_] += outside;
    double ns = updated * perParameterNs("optimizer", "step") * scale + outside;
    if (l_.ep > 1) {  // the experts' squared gradient norm, one double over ep
      const double norm =
          collectiveNs("ep", "allreduce", static_cast<double>(kEpGradNormBytesPerStep), 1, false);
      epNs_ += norm;
      ns += norm;
    }
    // In the step, not in a dimension's exposed communication (that is
    // the gradients', activations' and parameters').
    if (l_.pp > 1) ns += 2 * collectiveNs("pp", "allreduce", 8, 1, false);
    if (l_.tp > 1) ns += collectiveNs("tp", "allreduce", 8, 1, false);
    if (l_.dp > 1) ns += collectiveNs("dp", "allreduce", 8, 1, false);
    return ns;
  }

  // A per-parameter cost without a CPU measurement of its own (the step's
  // time outside ops, ZeRO's bucket work): with a background, taken out of
  // the calibration's own stretch first (contention.h, perParameterCpuNs).
  std::optional<double> perParameterCostNs(const char* part, const char* op) const {
    return background_ ? perParameterCpuNs(c_, part, op) : c_.perParameterNs(part, op, cpu_);
  }

  double perParameterNs(const char* part, const char* op) {
    if (auto ns = c_.perParameterNs(part, op, cpu_)) return *ns;
    warn(std::string("no ") + op + " cost of " + part + " measured: taken as 0");
    return 0.0;
  }

  // Communication on the link dim's groups cross (link_costs.h), at the
  // step's end when the op being costed is one of it.
  double collectiveNs(const std::string& dim, const std::string& collective, double bytes,
                      double calls, bool sayOtherDim = true) {
    return links_.collectiveNs(dim, collective, bytes, calls, stepEnd_, sayOtherDim);
  }

  double tpCommNs(const ChunkParts& c, int32_t allReducesPerLayer) {
    if (l_.tp <= 1) return 0.0;
    const double calls = static_cast<double>(allReducesPerLayer) * c.layers;
    const double ns = collectiveNs("tp", "allreduce", calls * actBytes_, calls);
    tpNs_ += ns;
    return ns;
  }

  double zeroNs(const std::string& collective, double parameters, double calls) {
    if (l_.dp <= 1) return 0.0;
    // Reduce-scatters move gradients, gathers parameters (RunFormat's sizes).
    const double bytes =
        collective == "reduce_scatter" ? c_.format.gradientBytes : c_.format.parameterBytes;
    const double ns = collectiveNs("zero", collective, parameters * bytes, calls);
    dpNs_ += ns;
    return ns;
  }

  // ZeRO 2/3's reduce-scatter of one micro-batch's `parameters` gradients:
  // the fit of the per-micro-batch reduce-scatters (kMicroBatchReduceScatter)
  // on the dimension's link, else ZeRO 1's reduce-scatter fit (which a
  // calibration without a ZeRO 2/3 run holds).
  double microBatchReduceScatterNs(double parameters, double calls) {
    if (l_.dp > 1) {
      if (const LinkFit* f = links_.ownFit("zero", kMicroBatchReduceScatter)) {
        const double ns = calls * f->alphaNs + f->betaNsPerByte * parameters * c_.format.gradientBytes;
        dpNs_ += ns;
        return ns;
      }
    }
    return zeroNs("reduce_scatter", parameters, calls);
  }

  // ZeRO 2/3, per micro-batch and chunk: the ranks' own work around the
  // reduce-scatter (the chunk's gradients copied into the bucket, the reduced
  // shard added to the kept one), `elements` gradients at the calibration's
  // measured mean cost per element (kZeroBucketOp), compute; plus the
  // slowest rank's excess over that mean (kZeroBucketSkewOp), which the
  // others wait inside the reduce-scatter: exposed zero communication.
  double zeroBucketNs(const ChunkParts& chunk, double elements) {
    if (l_.dp <= 1) return 0.0;
    const auto work = perParameterCostNs(kZeroBucketPart, kZeroBucketOp);
    if (!work) {
      warn("no ZeRO 2/3 gradient bucket cost measured (the work around each micro-batch's "
           "reduce-scatter): taken as 0 (calibrate from a dp ZeRO 2 run for it)");
      return 0.0;
    }
    const double skew =
        elements * perParameterCostNs(kZeroBucketPart, kZeroBucketSkewOp).value_or(0.0) *
        computeScale_;
    dpNs_ += skew;
    const double own = elements * *work * computeScale_;
    if (!opSpansCover(chunk)) untracedNs_[stage_] += own;
    return own + skew;
  }

  // ZeRO-3's gather of a chunk's `parameters` in one pass, `calls` of them
  // (a layer slot each): the fit of the per-layer gathers
  // (kMicroBatchAllGather, at their mean) on the dimension's link, else the
  // once-a-step all-gather's (which a calibration without a ZeRO-3 run holds).
  double layerGatherNs(double parameters, double calls) {
    if (l_.dp > 1) {
      if (const LinkFit* f = links_.ownFit("zero", kMicroBatchAllGather)) {
        const double ns =
            calls * f->alphaNs + f->betaNsPerByte * parameters * c_.format.parameterBytes;
        dpNs_ += ns;
        return ns;
      }
    }
    return zeroNs("all_gather", parameters, calls);
  }

  // Whether the executor wraps the chunk's passes in op-level spans, which
  // cover the work between its layers (ZeRO 2's bucket copies): not where a
  // pass blocks on collectives, tp's all-reduces, the all-to-alls of a MoE
  // block over ep, ZeRO-3's gathers (schedule_executor.h, opSpans).
  bool opSpansCover(const ChunkParts& chunk) const {
    return l_.tp == 1 && !(l_.ep > 1 && chunk.split.moeBlocks > 0) &&
           l_.zeroStage != ZeroStage::kParameters;
  }

  // A ZeRO-1 step collective: the shared parameters over dp, this rank's
  // experts over their expert-data-parallel group (expert_parallel_cost.h).
  double zeroStepNs(const std::string& collective) {
    const ChunkParameters p = stageParameterSplit();
    double ns = zeroNs(collective, l_.ep > 1 ? p.shared : p.total(), 1);
    if (l_.ep > 1 && expertDataParallelSize(l_) > 1) ns += zeroNs(collective, p.experts, 1);
    return ns;
  }

  // Ranks sharing cores wait at the step's first gradient collective for the
  // last one scheduled (step_end_wait_fit.h): exposed dp communication. A
  // pipeline's own wait where the calibration has one.
  double stepEndWaitNs() {
    if (l_.dp <= 1 || !links_.sharedCores()) return 0.0;
    std::optional<double> perParameter;
    if (l_.pp > 1) {
      perParameter = c_.perParameterNs(kSharedCoresPart, kStepEndWaitPipelineOp, false);
    }
    if (!perParameter) perParameter = c_.perParameterNs(kSharedCoresPart, kStepEndWaitOp, false);
    const double ns = stageParameters() * perParameter.value_or(0.0);
    dpNs_ += ns;
    return ns;
  }

  // The all-to-alls of a chunk's MoE blocks in one pass (ep > 1).
  double epNs(const ChunkParts& c, const EpAllToAlls& pass) {
    if (pass.calls <= 0 || c.split.moeBlocks == 0) return 0.0;
    const double blocks = c.split.moeBlocks;
    const double ns = collectiveNs("ep", "all_to_all", blocks * pass.bytes, blocks * pass.calls);
    epNs_ += ns;
    return ns;
  }

  double opNs(const Op& op) {
    // The step's-end ops: every rank of the host is done computing.
    stepEnd_ = op.type == OpType::kAllReduceGrads || op.type == OpType::kOptimizerStep ||
               op.type == OpType::kAllGatherParams ||
               (op.type == OpType::kReduceScatterGrads && op.microBatch < 0);
    const ChunkParts& c = chunks_.at(p_.schedule.virtualStage(stage_, op.chunk));
    const ZeroStage z = l_.zeroStage;
    const bool gathers = z == ZeroStage::kParameters;
    const double slots = c.layers + (c.embedding ? 1 : 0) + (c.head ? 1 : 0);
    switch (op.type) {
      case OpType::kForward: {
        double ns = chunkComputeNs(c, "forward") + tpCommNs(c, 2) + epNs(c, epForwardAllToAlls(l_));
        if (gathers) ns += layerGatherNs(c.parameters, slots);
        return ns;
      }
      case OpType::kBackward:
      case OpType::kBackwardInput:
      case OpType::kBackwardWeight: {
        const std::string name = op.type == OpType::kBackward        ? "backward"
                                 : op.type == OpType::kBackwardInput ? "backward_input"
                                                                     : "backward_weight";
        double ns = chunkComputeNs(c, name);
        if (op.type != OpType::kBackwardWeight) {
          ns += tpCommNs(c, 2) + epNs(c, epBackwardAllToAlls(l_));
        }
        if (l_.recompute && op.type != OpType::kBackwardWeight) {
          ns += chunkComputeNs(c, "recompute") + tpCommNs(c, 2) + epNs(c, epForwardAllToAlls(l_));
          if (gathers) ns += layerGatherNs(c.parameters, slots);
        }
        // ZeRO-3 gathers the parameters again for the weight gradients.
        if (op.type != OpType::kBackwardInput && gathers) {
          ns += layerGatherNs(c.parameters, slots);
        }
        return ns;
      }
      case OpType::kSendActivation:
      case OpType::kSendGrad:
        ppNs_ += p_.p2pNs;
        return p_.p2pNs;
      case OpType::kRecvActivation:
      case OpType::kRecvGrad:
        return -1.0;  // the simulator's wait
      case OpType::kAllReduceGrads: {
        if (l_.dp <= 1) return 0.0;
        if (l_.ep <= 1) {
          const double ns = gradReductionNs(stageParameters(), l_.dp, true);
          return overlappedReductionNs(ns) + stepEndWaitNs();
        }
        // With ep the experts' gradients are reduced over their own group.
        const ChunkParameters p = stageParameterSplit();
        const int32_t experts = expertDataParallelSize(l_);
        return gradReductionNs(p.shared, l_.dp, false) +
               (experts > 1 ? gradReductionNs(p.experts, experts, false) : 0.0) + stepEndWaitNs();
      }
      case OpType::kReduceScatterGrads:
        // ZeRO 1: the stage's gradients once; ZeRO 2/3: one chunk's per
        // micro-batch, after its backward.
        if (op.microBatch < 0) return zeroStepNs("reduce_scatter") + stepEndWaitNs();
        return microBatchReduceScatterNs(c.parameters, slots) + zeroBucketNs(c, c.parameters);
      case OpType::kOptimizerStep:
        return optimizerStepNs();
      case OpType::kAllGatherParams:  // ZeRO 1/2: the updated shards
        return zeroStepNs("all_gather");
    }
    return -1.0;
  }

  // With RunFormat::overlapsGradReduction (and the layout's overlap on, no
  // compression), the buckets of the stage's last backward reduce while it
  // runs: what the step waits for is exposedOverlappedReductionNs
  // (grad_reduction_cost.h), the exposed dp communication.
  double overlappedReductionNs(double ns) {
    if (!c_.format.overlapsGradReduction || !l_.overlap || l_.gradCompression.compresses()) {
      return ns;
    }
    const double element = c_.format.gradientBytes;
    const double exposed = exposedOverlappedReductionNs(
        ns, stageParameters() * element,
        static_cast<double>(l_.bucketElementCount(static_cast<int32_t>(element))) * element,
        lastBackwardNs_);
    dpNs_ -= ns - exposed;
    return exposed;
  }

  // ZeRO 0's bucketed reduction of `elements` gradients of the stage over
  // `group` dp ranks as the layout's compression and all-reduce algorithm
  // send them (grad_reduction_cost.h): the collectives are dp communication,
  // the encoding compute. `matrices`: the stage's matrix-shaped gradients
  // are among them (PowerSGD).
  double gradReductionNs(double elements, int32_t group, bool matrices) {
    GradReductionInput in = gradReductionInput(l_);
    // gradReductionCost counts fp32 elements: g-byte gradients move the
    // bytes of n·g/4 of them.
    in.elements = elements * c_.format.gradientBytes / kBytesPerElement;
    in.group = group;
    // Where the layout's hosts split the dp group over hosts: its nodes.
    if (in.link.ranksPerNode == 0 && links_.linkOf("dp") == kOtherHost) {
      in.link.ranksPerNode = groupRanksOnHost(l_, placed_, 0, "dp");
    }
    in.bucketElements = l_.bucketElementCount(4);
    in.cpuTime = cpu_;
    in.computeScale = computeScale_;
    in.sharedCores = links_.sharedCores();  // at the step's end (LinkCosts::sharedLinkOf)
    for (int32_t c = 0; matrices && c < p_.schedule.chunks; ++c) {
      const ChunkParts& part = chunks_[p_.schedule.virtualStage(stage_, c)];
      for (const MatrixShape& m :
           gradTensors(l_.model, l_.tp, part.firstLayer, part.layers, part.embedding, part.head)) {
        in.tensors.push_back(m);
      }
    }
    GradReductionCost cost = gradReductionCost(in, c_);
    for (std::string& w : cost.warnings) warn(std::move(w));
    dpNs_ += cost.commNs;
    const double ns = cost.totalNs();
    if (ns >= p_.gradReduction.totalNs())
      p_.gradReduction = std::move(cost);  // the slowest stage's
    return ns;
  }

  double stageParameters() const { return stageParameterSplit().total(); }

  ChunkParameters stageParameterSplit() const {
    ChunkParameters p;
    for (int32_t c = 0; c < p_.schedule.chunks; ++c) {
      const ChunkParameters& s = chunks_[p_.schedule.virtualStage(stage_, c)].split;
      p.shared += s.shared;
      p.experts += s.experts;
      p.moeBlocks += s.moeBlocks;
    }
    return p;
  }

  void buildOpCosts() {
    const Schedule& s = p_.schedule;
    p_.opCostsNs.assign(s.stages, {});
    untracedNs_.assign(s.stages, 0.0);
    fixedNs_.assign(s.stages, {});
    workNs_.assign(s.stages, {});
    double maxTp = 0, maxDp = 0, maxPp = 0, maxEp = 0;
    for (stage_ = 0; stage_ < s.stages; ++stage_) {
      tpNs_ = dpNs_ = ppNs_ = epNs_ = 0;
      lastBackwardNs_ = 0;
      for (const Op& op : s.stageOps[stage_]) {
        opWorkNs_ = 0;
        const double ns = opNs(op);
        // Time-shared: the op's compute apart (at a core's pace), the rest
        // fixed; its uniform duration stands in where one is needed first.
        fixedNs_[stage_].push_back(ns < 0 ? ns : ns - opWorkNs_);
        workNs_[stage_].push_back(opWorkNs_);
        const double stretched = opWorkNs_ * (sharing_.paidFactor() - 1);
        p_.opCostsNs[stage_].push_back(ns < 0 ? ns : ns + stretched);
        if (op.type == OpType::kBackward || op.type == OpType::kBackwardWeight) {
          lastBackwardNs_ = p_.opCostsNs[stage_].back();
        }
      }
      maxTp = std::max(maxTp, tpNs_);
      maxDp = std::max(maxDp, dpNs_);
      maxPp = std::max(maxPp, ppNs_);
      maxEp = std::max(maxEp, epNs_);
    }
    if (l_.tp > 1) p_.exposedCommNs["tp"] = maxTp;
    if (l_.ep > 1) p_.exposedCommNs["ep"] = maxEp;
    if (l_.dp > 1) p_.exposedCommNs[l_.zeroStage == ZeroStage::kNone ? "dp" : "zero"] = maxDp;
    if (l_.pp > 1) p_.exposedCommNs["pp"] = maxPp;
  }

  void finish() {
    const Simulation& sim = p_.simulation;
    p_.stepNs = sim.makespan;
    const double tokens = static_cast<double>(globalBatchSequences(l_)) * l_.model.seqLen;
    p_.tokensPerSecond = p_.stepNs > 0 ? tokens / (p_.stepNs * 1e-9) : 0.0;
    // Ψ per rank; with ep a rank holds 1/ep of the experts.
    double psi = parametersPerRank(l_);
    if (l_.ep > 1) {
      psi = 0;
      for (const ChunkParts& c : chunks_) psi += c.parameters / l_.pp;
    }
    const RunFormat& f = c_.format;
    const ModelStateBytes ms =
        zeroModelStateBytes(l_, psi, f.parameterBytes, f.gradientBytes, f.optimizerBytes);
    const double states = ms.parameters + ms.gradients + ms.optimizer + ms.transientParameters +
                          ms.transientGradients;
    for (int32_t k = 0; k < p_.schedule.stages; ++k) {
      const StageStats& st = sim.stages[k];
      // As `report` measures it: what the stage neither computes nor
      // communicates in, its idle and the time its spans leave uncovered.
      const double bubbleNs = st.idle + untracedNs_[k];
      p_.bubble.push_back(sim.makespan > 0 ? std::min(1.0, bubbleNs / sim.makespan) : 0.0);
      std::vector<ChunkExtent> stageChunks;
      for (int32_t c = 0; c < p_.schedule.chunks; ++c) {
        const ChunkParts& part = chunks_[p_.schedule.virtualStage(k, c)];
        stageChunks.push_back({part.layers, part.embedding, part.head});
      }
      const double acts = stageActivationBytes(l_, stageChunks, st.peakInFlight, f);
      p_.activationBytes.push_back(acts);
      p_.memoryBytes.push_back(states + acts);
    }
  }

  const Layout& l_;
  const Calibration& c_;
  const bool cpu_;
  const bool background_;  // predicted for a background (PredictOptions)
  const std::vector<std::string> placed_;  // the host of each rank (link_class.h)
  const CoreSharing sharing_;              // the busiest host's ranks per core
  LinkCosts links_;                        // the fits communication is costed with
  const double straggler_;                    // 1 on a single rank
  const double overhead_;  // with a background the calibration's own (contention.h), else 1
  // What every compute cost is multiplied by besides the straggler factor:
  // the sharing's 1 + (s - 1) · paid (CoreSharing::paidFactor) and the
  // overhead.
  const double computeScale_;
  // A pipeline with more ranks than its one host has cores: its layers'
  // compute is costed at a core's pace (times the overhead) and stretched
  // by the time-shared simulation (time_sharing.h), the rest of an op fixed.
  // With a core per rank and a background alone, the scheduler keeps each
  // rank on its own core beside its share of the background: a waiting
  // stage's core goes to the background, not to the other stages, whose
  // compute stretches as much as when all run (measured beside four busy
  // loops on 2 cores: 2.7-3.0x while the peer waited, 2.8-3.0x while it
  // computed; the time-shared model said 2.5x), so the uniform stretch
  // (computeScale_) prices it.
  const bool timeShared_;
  bool placedStages_ = false;  // the time-shared stages placed on cores (core_placement.h)
  OpCosts fixedNs_, workNs_;  // [stage][op], as time_sharing.h takes them
  double opWorkNs_ = 0;       // the compute of the op being costed (timeShared_)
  Prediction p_;
  std::vector<ChunkParts> chunks_;  // per virtual stage
  double actBytes_ = 0;
  int32_t stage_ = 0;
  double tpNs_ = 0, dpNs_ = 0, ppNs_ = 0, epNs_ = 0;  // the current stage's comm per step
  double lastBackwardNs_ = 0;  // the current stage's latest Backward or BackwardWeight op
  // Per stage, the part of its op costs the trace shows no span for (the
  // step's time outside ops, ZeRO 2/3's bucket work where no op-level span
  // covers it): busy in the simulation, idle in `report`'s bubble.
  std::vector<double> untracedNs_;
  bool stepEnd_ = false;       // the op being costed is one of the step's end (opNs)
};

}  // namespace

Result<Prediction> predictLayout(const Layout& layout, const Calibration& calibration,
                                 const PredictOptions& options) {
  return Predictor(layout, calibration, options).run();
}

}  // namespace bubblescope::layout
