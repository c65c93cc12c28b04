#include "planning/cluster_cost.h"

#include <algorithm>
#include <cmath>

#include "planning/link_class.h"

namespace bubblescope::layout {
namespace {

constexpr double kHalfBytes = 2.0;  // fp16 / bf16 activations and GEMM operands

double gemmFlops(const GemmShape& g) { return 2.0 * g.batch * g.m * g.n * g.k; }

double sumGemmNs(const HardwareProfile& hw, const ClusterSettings& s,
                 const std::vector<GemmShape>& gemms) {
  double ns = 0;
  for (const GemmShape& g : gemms) ns += gemmNs(hw, s, g);
  return ns;
}

double sumGemmFlops(const std::vector<GemmShape>& gemms) {
  double f = 0;
  for (const GemmShape& g : gemms) f += gemmFlops(g);
  return f;
}

// Bus bandwidth of one link in bytes/s.
double nvlinkBus(const HardwareProfile& hw) { return hw.nvlinkEfficiency * hw.nvlinkGBs * 1e9; }
double crossNodeBus(const HardwareProfile& hw, int32_t ranksPerNode) {
  return std::min(nvlinkBus(hw), hw.networkEfficiency * hw.nicBytesPerGpu() * ranksPerNode);
}

LinkFit ringFit(const std::string& dim, const std::string& link, const std::string& collective,
                int32_t group, double latencyNs, double busBytesPerSecond) {
  LinkFit f;
  f.dim = dim;
  f.link = link;
  f.collective = collective;
  f.groupSize = group;
  const double g = group;
  const double steps = collective == "allreduce" ? 2.0 * (g - 1) : g - 1;
  f.alphaNs = steps * latencyNs;
  f.betaNsPerByte = steps / g / busBytesPerSecond * 1e9;
  f.samples = 1;
  return f;
}

}  // namespace

double gemmNs(const HardwareProfile& hw, const ClusterSettings& s, const GemmShape& g) {
  if (g.m <= 0 || g.n <= 0 || g.k <= 0 || g.batch <= 0) return 0.0;
  const double peak = hw.peakFlops(s.dtype);
  const double efficiency = s.gemmEfficiency > 0 ? s.gemmEfficiency : hw.gemmMaxEfficiency;
  double utilization = 0;
  for (const auto& [tm, tn] : hw.gemmTiles) {
    const double tiles = g.batch * std::ceil(g.m / tm) * std::ceil(g.n / tn);
    const double waves = std::ceil(tiles / std::max(1, hw.sms));
    utilization = std::max(utilization, g.batch * g.m * g.n / (waves * hw.sms * tm * tn));
  }
  const double computeNs = peak > 0 && efficiency > 0 && utilization > 0
                               ? gemmFlops(g) / (peak * efficiency * utilization) * 1e9
                               : 0.0;
  const double bytes = kHalfBytes * g.batch * (g.m * g.k + g.k * g.n + g.m * g.n);
  const double memoryNs = bytes / (hw.memoryBandwidthGBs * hw.memoryBoundEfficiency);
  return hw.kernelOverheadUs * 1e3 + std::max(computeNs, memoryNs);
}

double memoryBoundNs(const HardwareProfile& hw, double bytes, int32_t kernels) {
  return kernels * hw.kernelOverheadUs * 1e3 +
         bytes / (hw.memoryBandwidthGBs * hw.memoryBoundEfficiency);
}

PartOpNs clusterBlockNs(const ModelConfig& m, const HardwareProfile& hw, const ClusterSettings& s,
                        int32_t microBatchSize, int32_t tp) {
  const double b = microBatchSize, seq = m.seqLen, h = m.hidden, t = tp;
  const double f = m.mlpHidden();
  const double tokens = b * seq;
  const double heads = static_cast<double>(m.numHeads) / t;  // on this tp rank
  const double d = static_cast<double>(m.headSize());
  const double batch = b * heads;
  const std::vector<GemmShape> forward = {
      {tokens, 3 * h / t, h},  {tokens, h, h / t},    {tokens, f / t, h},
      {tokens, h, f / t},      {seq, seq, d, batch},  {seq, d, seq, batch},
  };
  const std::vector<GemmShape> inputGrad = {
      {tokens, h, 3 * h / t}, {tokens, h / t, h},   {tokens, h, f / t},   {tokens, f / t, h},
      {seq, d, seq, batch},   {seq, d, seq, batch},  // dQ, dK from the scores
      {seq, seq, d, batch},   {seq, d, seq, batch},  // dP, dV from the context
  };
  const std::vector<GemmShape> weightGrad = {
      {h, 3 * h / t, tokens}, {h / t, h, tokens}, {h, f / t, tokens}, {f / t, h, tokens}};
  // Memory-bound elements per token (header): 11h + 10h/t + 4.5·a·s/t.
  const double elements = tokens * (11 * h + 10 * h / t + 4.5 * heads * seq);
  PartOpNs out;
  out.flops = sumGemmFlops(forward);
  out.forward = sumGemmNs(hw, s, forward) + memoryBoundNs(hw, kHalfBytes * elements, 9);
  out.backwardInput = sumGemmNs(hw, s, inputGrad) + memoryBoundNs(hw, 2 * kHalfBytes * elements, 14);
  out.backwardWeight = sumGemmNs(hw, s, weightGrad);
  return out;
}

PartOpNs clusterEmbeddingNs(const ModelConfig& m, const HardwareProfile& hw,
                            int32_t microBatchSize, int32_t /*tp*/) {
  const double tokens = static_cast<double>(microBatchSize) * m.seqLen;
  const double h = m.hidden;
  PartOpNs out;
  // Gather the token and position rows, add, dropout: 5.5 elements a token.
  out.forward = memoryBoundNs(hw, kHalfBytes * 5.5 * tokens * h, 3);
  // Scatter-add of the gradient rows into the tables: 3 elements a token.
  out.backwardWeight = memoryBoundNs(hw, kHalfBytes * 3 * tokens * h, 2);
  return out;
}

PartOpNs clusterHeadNs(const ModelConfig& m, const HardwareProfile& hw, const ClusterSettings& s,
                       int32_t microBatchSize, int32_t tp) {
  const double tokens = static_cast<double>(microBatchSize) * m.seqLen;
  const double h = m.hidden;
  const double v = static_cast<double>(m.vocabSize) / tp;  // vocabulary-parallel logits
  constexpr double kFp32 = 4.0;
  PartOpNs out;
  const GemmShape logits{tokens, v, h};
  out.flops = gemmFlops(logits);
  // Final layer norm (2 elements a token), logits, a cross entropy that
  // reads the fp16 logits and writes fp32 probabilities.
  out.forward = memoryBoundNs(hw, kHalfBytes * 2 * tokens * h, 1) + gemmNs(hw, s, logits) +
                memoryBoundNs(hw, (kHalfBytes + kFp32) * tokens * v, 4);
  out.backwardInput = memoryBoundNs(hw, (kHalfBytes + kFp32) * tokens * v, 2) +
                      gemmNs(hw, s, {tokens, h, v}) +
                      memoryBoundNs(hw, kHalfBytes * 3 * tokens * h, 2);
  out.backwardWeight = gemmNs(hw, s, {h, v, tokens});
  return out;
}

std::vector<LinkFit> clusterLinkFits(const Layout& l, const HardwareProfile& hw) {
  std::vector<LinkFit> fits;
  const std::vector<std::string> placed = placedHosts(l);
  const double nvLatency = hw.nvlinkLatencyUs * 1e3;
  const double netLatency = hw.networkLatencyUs * 1e3;
  const std::pair<const char*, int32_t> dims[] = {{"tp", l.tp}, {"pp", l.pp}, {"dp", l.dp},
                                                  {"zero", l.dp}};
  for (const auto& [dim, group] : dims) {
    if (group <= 1) continue;
    const int32_t perNode = groupRanksOnHost(l, placed, 0, dim);
    for (const char* collective : {"allreduce", "reduce_scatter", "all_gather"}) {
      fits.push_back(ringFit(dim, kSameHost, collective, group, nvLatency, nvlinkBus(hw)));
      fits.push_back(
          ringFit(dim, kOtherHost, collective, group, netLatency, crossNodeBus(hw, perNode)));
    }
    LinkFit p2p;
    p2p.dim = dim;
    p2p.collective = "p2p";
    p2p.groupSize = 2;
    p2p.samples = 1;
    p2p.link = kSameHost;
    p2p.alphaNs = nvLatency;
    p2p.betaNsPerByte = 1e9 / nvlinkBus(hw);
    fits.push_back(p2p);
    p2p.link = kOtherHost;
    p2p.alphaNs = netLatency;
    const double t = l.tp;
    p2p.betaNsPerByte = 1e9 / (t * hw.networkEfficiency * hw.nicBytesPerGpu()) +
                        (t - 1) / t * 1e9 / nvlinkBus(hw);
    fits.push_back(p2p);
  }
  return fits;
}

std::vector<std::string> clusterHosts(int64_t world, int32_t gpusPerNode) {
  std::vector<std::string> hosts;
  const int64_t per = std::max(1, gpusPerNode);
  for (int64_t first = 0, node = 0; first < world; first += per, ++node) {
    hosts.push_back("node" + std::to_string(node) + ":" + std::to_string(std::min(per, world - first)));
  }
  return hosts;
}

Calibration clusterCalibration(const Layout& l, const HardwareProfile& hw,
                               const ClusterSettings& s) {
  Calibration c;
  c.name = "hardware " + hw.name;
  c.method = "hardware";
  c.host = hw.nodeName;
  c.model = l.model;
  c.backend = "cuda";
  const int32_t b = l.microBatchSize;
  const int32_t tp = l.tp;
  auto add = [&](const char* part, const PartOpNs& p) {
    auto entry = [&](const char* op, double ns) { c.ops.push_back({part, op, b, tp, ns, ns, 1}); };
    entry("forward", p.forward);
    // Megatron-LM checkpoints the transformer layers only.
    entry("recompute", std::string(part) == "block" ? p.forward : 0.0);
    entry("backward", p.backwardInput + p.backwardWeight);
    entry("backward_input", p.backwardInput);
    entry("backward_weight", p.backwardWeight);
  };
  add("block", clusterBlockNs(l.model, hw, s, b, tp));
  add("embedding", clusterEmbeddingNs(l.model, hw, b, tp));
  add("head", clusterHeadNs(l.model, hw, s, b, tp));
  const double adamNs = memoryBoundNs(hw, kAdamBytesPerParameter, 0);
  c.ops.push_back({"optimizer", "step", 0, 1, adamNs, adamNs, 1});
  // The engine's CPU copies into ZeRO 2/3's buckets (kZeroBucketPart) are
  // not a GPU runtime's: its gradients reduce from the buckets they are
  // written to.
  c.ops.push_back({kZeroBucketPart, kZeroBucketOp, 0, 1, 0.0, 0.0, 1});
  c.links = clusterLinkFits(l, hw);
  c.format.activationBytes = kHalfBytes;
  c.format.parameterBytes = kHalfBytes;
  c.format.gradientBytes = kHalfBytes;
  c.format.optimizerBytes = 12;
  c.format.recomputeEachLayer = true;
  c.format.overlapsGradReduction = true;
  return c;
}

Result<Prediction> predictCluster(Layout layout, const HardwareProfile& hw,
                                  const ClusterSettings& s) {
  if (layout.tp > hw.gpusPerNode) {
    return Status::invalidArgument("tp " + std::to_string(layout.tp) + " spans nodes: " + hw.name +
                                   " has " + std::to_string(hw.gpusPerNode) +
                                   " GPUs per node (tensor parallelism stays on NVLink)");
  }
  if (!(hw.peakFlops(s.dtype) > 0)) {
    return Status::invalidArgument("hardware " + hw.name + " has no " + s.dtype + " peak");
  }
  layout.hosts = clusterHosts(layout.worldSize(), hw.gpusPerNode);
  layout.hostfile.clear();
  layout.ranksPerNode = 0;
  return predictLayout(layout, clusterCalibration(layout, hw, s));
}

double megatronIterationFlops(const ModelConfig& m, int64_t globalBatch) {
  const double s = m.seqLen, l = m.numLayers, h = m.hidden, v = m.vocabSize;
  return 96.0 * static_cast<double>(globalBatch) * s * l * h * h *
         (1.0 + s / (6.0 * h) + v / (16.0 * l * h));
}

}  // namespace bubblescope::layout
