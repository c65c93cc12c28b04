#include "planning/cluster_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

#include "planning/formulas.h"
#include "planning/prediction_summary.h"

namespace bubblescope::layout {
namespace {

std::string pct(double x) {
  return std::to_string(static_cast<int>(std::lround(100 * x))) + "%";
}

// The op costs of one (micro-batch size, tp): the parts of a cluster
// calibration, looked up once per pair.
struct PartCosts {
  PartOpNs block, embedding, head;
};

struct Estimated {
  Layout layout;
  double stepNs = 0;
  double memoryBytes = 0;
};

class Estimator {
 public:
  explicit Estimator(const ClusterPlanRequest& r) : r_(r) {}

  Estimated estimate(const Layout& l) {
    const HardwareProfile& hw = r_.hardware;
    const PartCosts& c = costs(l.microBatchSize, l.tp);
    const double p = l.pp, v = l.virtualChunks, m = l.microBatches, t = l.tp;
    const double layers = std::ceil(static_cast<double>(l.model.numLayers) / p);
    const PartOpNs& bl = c.block;
    const double act = 2.0 * l.microBatchSize * l.model.seqLen * l.model.hidden;
    const double nvBus = hw.nvlinkEfficiency * hw.nvlinkGBs;  // bytes per ns
    double tpPerLayer = 0;
    if (l.tp > 1) {
      const double one = 2 * (t - 1) * hw.nvlinkLatencyUs * 1e3 + 2 * (t - 1) / t * act / nvBus;
      tpPerLayer = (l.recompute ? 6 : 4) * one;
    }
    const double perLayer = bl.forward + bl.backwardInput + bl.backwardWeight +
                            (l.recompute ? bl.forward : 0) + tpPerLayer;
    const double perMb = layers * perLayer + c.head.forward + c.head.backwardInput +
                         c.head.backwardWeight;
    double bubbleUnits = 0;
    if (l.pp > 1) {
      switch (l.schedule) {
        case ScheduleKind::kInterleaved: bubbleUnits = (p - 1) / v; break;
        case ScheduleKind::kZeroBubbleH1: bubbleUnits = (p - 1) / 3; break;
        default: bubbleUnits = p - 1;
      }
    }
    Estimated e;
    e.layout = l;
    e.stepNs = (m + bubbleUnits) * perMb;
    // Gradient collectives over dp (2-byte elements), r dp ranks a node.
    const double psi = parametersPerRank(l);
    if (l.dp > 1) {
      const double inner = static_cast<double>(l.tp) * l.pp;
      const bool crosses = inner * l.dp > hw.gpusPerNode;
      const double perNode = std::max(1.0, std::min<double>(l.dp, hw.gpusPerNode / inner));
      const double bus = crosses ? std::min(nvBus, hw.networkEfficiency * hw.nicBytesPerGpu() *
                                                       perNode / 1e9)
                                 : nvBus;
      const double d = l.dp;
      const double pass = (d - 1) / d * 2.0 * psi / bus;  // one reduce-scatter or gather
      switch (l.zeroStage) {
        case ZeroStage::kNone:
        case ZeroStage::kOptimizer: e.stepNs += 2 * pass; break;
        case ZeroStage::kGradients: e.stepNs += (m + 1) * pass; break;
        case ZeroStage::kParameters: e.stepNs += m * (l.recompute ? 4 : 3) * pass; break;
      }
    }
    const double updated = shardsOptimizer(l.zeroStage) ? psi / l.dp : psi;
    e.stepNs += updated * memoryBoundNs(hw, kAdamBytesPerParameter, 0);
    // Memory: model states + the in-flight micro-batches of stage 0.
    const ModelStateBytes ms = zeroModelStateBytes(l, psi, 2, 2, 12);
    const double states = ms.parameters + ms.gradients + ms.optimizer + ms.transientParameters +
                          ms.transientGradients;
    const int32_t warm = warmupForwards(l.schedule, l.pp, l.microBatches, l.virtualChunks, 0);
    const double inFlight =
        std::min<double>(m * v, warm + 1) / v;  // in stage-equivalents
    RunFormat f;
    f.activationBytes = 2;
    f.recomputeEachLayer = true;
    double acts = inFlight * activationBytesPerMicroBatch(l, static_cast<int32_t>(layers), false,
                                                          l.pp == 1, f);
    acts += recomputedBytes(l, static_cast<int32_t>(layers), false, l.pp == 1, f);
    e.memoryBytes = states + acts;
    return e;
  }

 private:
  const PartCosts& costs(int32_t b, int32_t tp) {
    auto [it, added] = cache_.try_emplace({b, tp});
    if (added) {
      const ClusterSettings& s = r_.settings;
      it->second.block = clusterBlockNs(r_.model, r_.hardware, s, b, tp);
      it->second.embedding = clusterEmbeddingNs(r_.model, r_.hardware, b, tp);
      it->second.head = clusterHeadNs(r_.model, r_.hardware, s, b, tp);
    }
    return it->second;
  }

  const ClusterPlanRequest& r_;
  std::map<std::pair<int32_t, int32_t>, PartCosts> cache_;
};

template <class T>
bool allowed(const std::optional<T>& only, T value) {
  return !only || *only == value;
}

}  // namespace

double clusterTflopsPerGpu(const Layout& l, double stepNs) {
  if (!(stepNs > 0)) return 0.0;
  const int64_t batch = int64_t{l.microBatchSize} * l.microBatches * l.dp;
  const ModelConfig& m = l.model;
  const double s = m.seqLen, layers = m.numLayers, h = m.hidden, v = m.vocabSize;
  const double flops = l.recompute ? megatronIterationFlops(m, batch)
                                   : 72.0 * static_cast<double>(batch) * s * layers * h * h *
                                         (1.0 + s / (6.0 * h) + v / (12.0 * layers * h));
  return flops / (stepNs * 1e-9 * static_cast<double>(l.worldSize())) / 1e12;
}

double clusterMfu(const Layout& l, double stepNs, double peakFlops) {
  if (!(stepNs > 0) || !(peakFlops > 0)) return 0.0;
  Layout noRecompute = l;
  noRecompute.recompute = false;
  return clusterTflopsPerGpu(noRecompute, stepNs) * 1e12 / peakFlops;
}

std::string clusterLimit(const Prediction& p, double peakMemoryBytes, double capacityBytes) {
  const double bubble = worstBubble(p);
  const auto [dim, comm] = largestExposedComm(p);
  const double memory = capacityBytes > 0 ? peakMemoryBytes / capacityBytes : 0.0;
  char gib[32];
  std::snprintf(gib, sizeof(gib), "%.0f GiB", capacityBytes / (1024.0 * 1024 * 1024));
  if (memory >= 0.9 && memory - 0.9 >= std::max(bubble, comm)) {
    return "memory (" + pct(memory) + " of " + gib + ")";
  }
  if (comm > bubble && comm > 0.05) {
    return "exposed " + dim + " communication (" + pct(comm) + " of the step)";
  }
  if (bubble > 0.05) return "pipeline bubble (" + pct(bubble) + ")";
  return "compute";
}

Result<ClusterPlan> planCluster(const ClusterPlanRequest& r) {
  if (r.gpus < 1) return Status::invalidArgument("--gpus must be >= 1");
  if (r.globalBatch < 1) return Status::invalidArgument("--global-batch must be >= 1");
  if (!(r.hardware.peakFlops(r.settings.dtype) > 0)) {
    return Status::invalidArgument("hardware " + r.hardware.name + " has no " + r.settings.dtype +
                                   " peak");
  }
  const ModelConfig& model = r.model;
  ClusterPlan plan;
  Estimator estimator(r);
  std::vector<Estimated> fitting;
  std::string firstProblem;
  double leastMemory = -1;
  const double capacity = r.hardware.memoryBytes();
  for (int32_t tp = 1; tp <= r.hardware.gpusPerNode && tp <= r.gpus; tp *= 2) {
    if (r.gpus % tp || model.numHeads % tp || !allowed(r.tp, tp)) continue;
    for (int32_t pp = 1; pp <= r.gpus / tp && pp <= model.numLayers; ++pp) {
      if ((r.gpus / tp) % pp || !allowed(r.pp, pp)) continue;
      const int32_t dp = r.gpus / tp / pp;
      if (r.globalBatch % dp) {
        if (firstProblem.empty()) {
          firstProblem = "the global batch " + std::to_string(r.globalBatch) +
                         " is not divisible by dp " + std::to_string(dp);
        }
        continue;
      }
      const int64_t perReplica = r.globalBatch / dp;
      for (int32_t b : r.microBatchSizes) {
        if (perReplica % b || perReplica / b > 1000000) continue;
        const auto m = static_cast<int32_t>(perReplica / b);
        for (ZeroStage z : r.zeroStages) {
          if (dp == 1 && z != ZeroStage::kNone) continue;
          for (ScheduleKind kind : r.schedules) {
            if (pp == 1 && kind != ScheduleKind::kOneFOneB) continue;
            std::vector<int32_t> chunks = {1};
            if (kind == ScheduleKind::kInterleaved) {
              chunks.clear();
              for (int32_t v = 2; v <= 8 && pp * v <= model.numLayers; ++v) {
                if (model.numLayers % (pp * v) == 0 && m % pp == 0) chunks.push_back(v);
              }
            }
            for (int32_t v : chunks) {
              for (bool recompute : {false, true}) {
                if (!allowed(r.recompute, recompute)) continue;
                Layout l;
                l.model = model;
                l.dp = dp;
                l.tp = tp;
                l.pp = pp;
                l.zeroStage = z;
                l.schedule = kind;
                l.virtualChunks = v;
                l.microBatches = m;
                l.microBatchSize = b;
                l.globalBatch = r.globalBatch;
                l.recompute = recompute;
                l.backend = Backend::kCuda;
                l.steps = 1;
                if (Status s = validate(l); !s.isOk()) {
                  if (firstProblem.empty()) firstProblem = s.message();
                  continue;
                }
                ++plan.considered;
                Estimated e = estimator.estimate(l);
                leastMemory =
                    leastMemory < 0 ? e.memoryBytes : std::min(leastMemory, e.memoryBytes);
                if (e.memoryBytes <= capacity) fitting.push_back(std::move(e));
              }
            }
          }
        }
      }
    }
  }
  if (plan.considered == 0) {
    return Status::invalidArgument(
        "no layout of " + std::to_string(r.gpus) + " GPUs for this model at global batch " +
        std::to_string(r.globalBatch) +
        (firstProblem.empty() ? std::string(" (tp must divide the heads and the GPUs)")
                              : " (" + firstProblem + ")"));
  }
  plan.fitEstimate = static_cast<int32_t>(fitting.size());
  std::stable_sort(fitting.begin(), fitting.end(),
                   [](const Estimated& a, const Estimated& b) { return a.stepNs < b.stepNs; });
  std::vector<ClusterCandidate> ranked;
  for (const Estimated& e : fitting) {
    if (plan.simulatedCount >= r.simulated) break;
    auto p = predictCluster(e.layout, r.hardware, r.settings);
    if (!p.isOk()) return p.status();
    ++plan.simulatedCount;
    ClusterCandidate c;
    c.layout = e.layout;
    c.layout.hosts = clusterHosts(c.layout.worldSize(), r.hardware.gpusPerNode);
    c.prediction = std::move(*p);
    for (double mem : c.prediction.memoryBytes) c.peakMemoryBytes = std::max(c.peakMemoryBytes, mem);
    leastMemory = std::min(leastMemory, c.peakMemoryBytes);
    if (c.peakMemoryBytes > capacity) continue;
    c.tflopsPerGpu = clusterTflopsPerGpu(c.layout, c.prediction.stepNs);
    c.mfu = clusterMfu(c.layout, c.prediction.stepNs, r.hardware.peakFlops(r.settings.dtype));
    c.limit = clusterLimit(c.prediction, c.peakMemoryBytes, capacity);
    ranked.push_back(std::move(c));
  }
  if (ranked.empty()) {
    char text[160];
    std::snprintf(text, sizeof(text),
                  "no layout fits the memory: all %d layouts need more than the %.0f GiB of a GPU "
                  "(the least needs %.1f GiB)",
                  plan.considered, capacity / (1024.0 * 1024 * 1024),
                  leastMemory / (1024.0 * 1024 * 1024));
    return Status::invalidArgument(text);
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.prediction.stepNs < b.prediction.stepNs;
  });
  if (static_cast<int32_t>(ranked.size()) > r.top) ranked.resize(std::max(0, r.top));
  plan.best = std::move(ranked);
  return plan;
}

}  // namespace bubblescope::layout
