#include "planning/planner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include "common/value_range.h"
#include "planning/formulas.h"
#include "planning/prediction_summary.h"
#include "engine/layout/stage_split.h"

namespace bubblescope::layout {
namespace {

// Compression applies to ZeRO 0's data-parallel all-reduce only.
std::vector<GradCompressionSpec> compressionsFor(const PlanRequest& r, int32_t dp, ZeroStage z) {
  if (dp <= 1 || z != ZeroStage::kNone || r.compressions.empty()) return {GradCompressionSpec{}};
  return r.compressions;
}

// Hierarchical beside flat where the nodes (emulated, or the hosts) split
// the dp group of an uncompressed ZeRO 0 layout and hold more than one of
// its ranks (with one a node has nothing to reduce first).
std::vector<AllReduceAlgorithm> algorithmsFor(const Layout& l) {
  const std::vector<AllReduceAlgorithm> flat = {AllReduceAlgorithm::kFlat};
  if (l.dp <= 1 || l.zeroStage != ZeroStage::kNone || l.gradCompression.compresses()) return flat;
  const int32_t inner = l.tp * l.pp;
  const bool emulatedSplit = l.ranksPerNode > 0 && l.ranksPerNode < l.worldSize() &&
                             l.ranksPerNode % inner == 0 && l.ranksPerNode / inner > 1 &&
                             l.ranksPerNode / inner < l.dp;
  if (!emulatedSplit && l.hosts.size() < 2) return flat;
  return {AllReduceAlgorithm::kFlat, AllReduceAlgorithm::kHierarchical};
}

// The divisors of n >= 1, ascending, found up to sqrt(n) (no int overflow
// for any int32 n: the loop variable is 64-bit).
std::vector<int32_t> divisorsOf(int32_t n) {
  std::vector<int32_t> low, high;
  for (int64_t d = 1; d * d <= n; ++d) {
    if (n % d) continue;
    low.push_back(static_cast<int32_t>(d));
    if (d * d != n) high.push_back(static_cast<int32_t>(n / d));
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  return low;
}

// Expert parallelism for a MoE model: every ep dividing both dp and the
// experts (validate() drops the combinations `run` refuses, e.g. ZeRO 2/3).
std::vector<int32_t> expertParallelSizesFor(const ModelConfig& model, int32_t dp) {
  std::vector<int32_t> out = {1};
  if (!model.hasMoe()) return out;
  for (int32_t ep : divisorsOf(dp)) {
    if (ep > 1 && model.experts % ep == 0) out.push_back(ep);
  }
  return out;
}

std::vector<Layout> candidates(const PlanRequest& r) {
  std::vector<Layout> out;
  for (int32_t tp : divisorsOf(r.world)) {
    for (int32_t pp : divisorsOf(r.world / tp)) {
      const int32_t dp = r.world / tp / pp;
      std::vector<ZeroStage> zeros = {ZeroStage::kNone};
      if (dp > 1) {
        zeros = {ZeroStage::kNone, ZeroStage::kOptimizer, ZeroStage::kGradients,
                 ZeroStage::kParameters};
      }
      std::vector<ScheduleKind> schedules = {ScheduleKind::kOneFOneB};
      if (pp > 1) schedules = allScheduleKinds();
      for (ZeroStage z : zeros) {
        for (ScheduleKind s : schedules) {
          for (int32_t m : {1, 2, 4, 8, 16}) {
            if (pp > 1 && m < pp) continue;
            for (bool recompute : {false, true}) {
              for (const GradCompressionSpec& g : compressionsFor(r, dp, z)) {
                Layout l;
                l.model = r.model;
                l.dp = dp;
                l.tp = tp;
                l.pp = pp;
                l.zeroStage = z;
                l.schedule = s;
                l.virtualChunks = s == ScheduleKind::kInterleaved ? 2 : 1;
                l.microBatches = m;
                l.microBatchSize = r.microBatchSize;
                l.recompute = recompute;
                l.gradCompression = g;
                l.ranksPerNode = r.ranksPerNode;
                l.interNodeGbps = r.interNodeGbps;
                l.interNodeLatencyUs = r.interNodeLatencyUs;
                l.hosts = r.hosts;
                for (AllReduceAlgorithm a : algorithmsFor(l)) {
                  l.allReduce = a;
                  for (int32_t ep : expertParallelSizesFor(r.model, dp)) {
                    l.ep = ep;
                    out.push_back(l);
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return out;
}

std::string pct(double x) {
  return std::to_string(static_cast<int>(std::lround(100 * x))) + "%";
}

std::string ms(double ns) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3g ms", ns / 1e6);
  return text;
}

// Why a compressed candidate: the seeds' monitoring rule (communication
// above ~20% of the step: compress) with its predicted trade.
std::string compressionReason(const PlanCandidate& c) {
  const GradReductionCost& g = c.prediction.gradReduction;
  char ratio[32];
  std::snprintf(ratio, sizeof(ratio), "%.2f", g.compressionRatio());
  return "; " + c.layout.gradCompression.toString() + " gradients: " + ratio +
         "x fewer dp bytes, all-reduce " + ms(g.commNs) + " + encoding " + ms(g.codecNs) +
         " per step (changes the gradients: docs/parallel.md)";
}

// Why hierarchical: the seeds' rule of reducing inside a node first, with
// the bytes that then cross nodes against the flat ring's.
std::string hierarchyReason(const PlanCandidate& c) {
  const GradReductionCost& g = c.prediction.gradReduction;
  char mb[96];
  std::snprintf(mb, sizeof(mb), "%.3g MB cross nodes per step instead of %.3g MB",
                g.interNodeBytes / 1e6, g.uncompressedBytes / 1e6);
  return std::string("; hierarchical all-reduce (reduce inside each node first): ") + mb +
         ", all-reduce " + ms(g.commNs) + " per step";
}

// Why expert parallel: the experts are the bulk of a MoE model's weights;
// spread them and pay an all-to-all each MoE block.
std::string expertReason(const PlanCandidate& c) {
  const auto ep = c.prediction.exposedCommNs.find("ep");
  const double ns = ep == c.prediction.exposedCommNs.end() ? 0.0 : ep->second;
  return "; expert parallel " + std::to_string(c.layout.ep) + ": 1/" + std::to_string(c.layout.ep) +
         " of the experts per rank, all-to-alls " + ms(ns) + " exposed per step";
}

std::string ruleOf(const Layout& l) {
  if (l.tp == 1 && l.pp == 1) {
    return l.zeroStage == ZeroStage::kNone
               ? "fits one device: data parallel"
               : "data parallel, ZeRO " + std::to_string(static_cast<int>(l.zeroStage)) +
                     " where memory is short";
  }
  std::string rule;
  if (l.tp > 1) rule = "tensor parallel " + std::to_string(l.tp) + " inside a node";
  if (l.pp > 1) {
    if (!rule.empty()) rule += ", ";
    rule += "pipeline " + std::to_string(l.pp) + " (" + scheduleKindName(l.schedule) + ")";
  }
  if (l.dp > 1) rule += ", data parallel " + std::to_string(l.dp);
  return rule;
}

// What a prediction's exposed-communication key is called in a sentence.
std::string commName(const std::string& dim) {
  if (dim == "dp") return "data-parallel";
  if (dim == "zero") return "ZeRO";
  if (dim == "tp") return "tensor-parallel";
  if (dim == "pp") return "pipeline";
  if (dim == "ep") return "expert all-to-all";
  return dim;
}

// What limits a candidate most: a share that rounds to 0% limits nothing
// (saying "exposed ZeRO communication (0% of the step)" would send the
// reader after a cost that is not there), so such a layout is "compute".
std::string limitOf(const PlanCandidate& c, const PlanRequest& r) {
  const Prediction& p = c.prediction;
  const double bubble = worstBubble(p);
  const auto [commDim, comm] = largestExposedComm(p);
  const double memory = r.memoryPerRankBytes ? c.peakMemoryBytes / *r.memoryPerRankBytes : 0.0;
  if (memory >= bubble && memory >= comm && memory > 0) {
    return "memory (" + pct(memory) + " of the limit)";
  }
  constexpr double kNegligible = 0.005;  // under it pct() writes 0%
  if (comm > bubble && comm >= kNegligible) {
    return "exposed " + commName(commDim) + " communication (" + pct(comm) + " of the step)";
  }
  if (bubble >= kNegligible) return "pipeline bubble (" + pct(bubble) + ")";
  return "compute";
}

}  // namespace

Result<Plan> planLayouts(const PlanRequest& r, const Calibration& c) {
  BS_RETURN_IF_ERROR(checkRange<int32_t>("--world", r.world, 1, kMaxPlanWorld));
  Plan plan;
  std::string firstProblem;
  double leastMemory = -1;
  std::vector<PlanCandidate> fitting;
  for (const Layout& l : candidates(r)) {
    if (Status s = validate(l); !s.isOk()) {
      if (firstProblem.empty()) firstProblem = s.message();
      continue;
    }
    auto p = predictLayout(l, c, r.predict);
    if (!p.isOk()) return p.status();
    ++plan.valid;
    PlanCandidate cand;
    cand.layout = l;
    cand.prediction = std::move(*p);
    for (double m : cand.prediction.memoryBytes) {
      cand.peakMemoryBytes = std::max(cand.peakMemoryBytes, m);
    }
    leastMemory =
        leastMemory < 0 ? cand.peakMemoryBytes : std::min(leastMemory, cand.peakMemoryBytes);
    if (r.memoryPerRankBytes && cand.peakMemoryBytes > *r.memoryPerRankBytes) continue;
    cand.rule = ruleOf(l);
    if (l.gradCompression.compresses()) cand.rule += compressionReason(cand);
    if (l.allReduce == AllReduceAlgorithm::kHierarchical) cand.rule += hierarchyReason(cand);
    if (l.ep > 1) cand.rule += expertReason(cand);
    cand.limit = limitOf(cand, r);
    fitting.push_back(std::move(cand));
  }
  if (plan.valid == 0) {
    return Status::invalidArgument("no valid layout of world " + std::to_string(r.world) +
                                   " for this model: the layout rules removed them all (" +
                                   firstProblem + ")");
  }
  if (fitting.empty()) {
    return Status::invalidArgument("no layout fits the memory limit: all " +
                                   std::to_string(plan.valid) + " valid layouts need more than " +
                                   std::to_string(*r.memoryPerRankBytes / (1024.0 * 1024 * 1024)) +
                                   " GiB per rank (the least needs " +
                                   std::to_string(leastMemory / (1024.0 * 1024 * 1024)) + " GiB)");
  }
  plan.fitting = static_cast<int32_t>(fitting.size());
  std::stable_sort(fitting.begin(), fitting.end(), [](const auto& a, const auto& b) {
    return a.prediction.tokensPerSecond > b.prediction.tokensPerSecond;
  });
  // Ranked best first, so a shape's first candidate is its best.
  std::map<std::tuple<int32_t, int32_t, int32_t, int32_t>, size_t> shapeAt;  // -> index in kept
  std::vector<PlanCandidate> kept;
  for (PlanCandidate& cand : fitting) {
    const Layout& l = cand.layout;
    auto [it, added] = shapeAt.try_emplace({l.dp, l.tp, l.pp, l.ep}, kept.size());
    if (added || r.everyVariant) {
      kept.push_back(std::move(cand));
    } else {
      ++kept[it->second].variants;
    }
  }
  plan.shapes = static_cast<int32_t>(shapeAt.size());
  if (static_cast<int32_t>(kept.size()) > r.top) kept.resize(std::max(0, r.top));
  plan.best = std::move(kept);
  return plan;
}

std::vector<GradCompressionSpec> defaultPlanCompressions() {
  std::vector<GradCompressionSpec> out;
  for (const char* spec : {"none", "fp16", "bf16", "int8", "powersgd:4"}) {
    out.push_back(*parseGradCompression(spec));
  }
  return out;
}

Calibration flopsCalibration(const ModelConfig& model, double flopsPerSecond) {
  const LayerCosts costs = layerCostsFor(model);  // forward FLOPs per token
  const double tokens = model.seqLen;             // one sequence per micro-batch
  const double block = costs.layers.empty() ? 0.0 : costs.layers.front();
  Calibration c;
  c.name = "from FLOPs";
  c.method = "flops";
  c.model = model;
  auto add = [&](const char* part, double flopsPerToken) {
    const double ns = flopsPerToken * tokens / flopsPerSecond * 1e9;
    c.ops.push_back({part, "forward", 1, 1, ns, ns, 0});
    c.ops.push_back({part, "backward", 1, 1, 2 * ns, 2 * ns, 0});
  };
  add("block", block);
  add("embedding", costs.embedding);
  add("head", costs.head);
  c.ops.push_back({"optimizer", "step", 0, 1, 10.0, 10.0, 0});
  return c;
}

}  // namespace bubblescope::layout
