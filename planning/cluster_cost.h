// The cost model at cluster scale (docs/prediction.md, "The cluster model"):
// a layout of a GPT model on a hardware profile (hardware.h) priced from
// FLOPs and bytes, as a Calibration that predictLayout() (prediction.h), the
// local planner's one cost model, runs through the same schedules, op lists
// and simulator.
//
// Per layer and micro-batch of b sequences of s tokens on a tp rank (h
// hidden, a heads, d = h/a, F = ffn width, V vocabulary, t = tp):
//  - GEMMs by shape (gemmNs): forward qkv (bs, 3h/t, h), proj (bs, h, h/t),
//    fc (bs, F/t, h), fc2 (bs, h, F/t), and per (sequence, local head)
//    scores (s, s, d) and context (s, d, s); the input-gradient backward
//    (B) the transposed products of each linear and both products of each
//    attention GEMM, the weight-gradient backward (W) one (in, out, bs)
//    product per linear;
//  - memory-bound kernels (memoryBoundNs): forward 11h + 10h/t + 4.5·a·s/t
//    elements per token (two layer norms, two bias-dropout-residual adds,
//    bias-GeLU, the attention's scale-mask-softmax and dropout, the context
//    transpose), twice that in the backward (B);
//  - embedding: a gather of b·s·h (forward), a scatter-add (backward);
//    head: the final layer norm, logits (bs, V/t, h) and their backward, a
//    cross entropy over bs·V/t in fp32.
// Recompute is the forward again (predictLayout adds it). Collectives are
// alpha-beta fits built from the links (clusterLinkFits), the optimizer a
// memory-bound pass of kAdamBytesPerParameter per parameter updated.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "planning/calibration.h"
#include "planning/hardware.h"
#include "engine/layout/layout.h"
#include "planning/prediction.h"

namespace bubblescope::layout {

// The choices of the modelled run that are not the layout's.
struct ClusterSettings {
  std::string dtype = "fp16";  // the GEMMs' peak (HardwareProfile::peakTflops)
  // Replaces the profile's GEMM max efficiency when > 0 (bench cluster's
  // one global fit; docs/prediction.md).
  double gemmEfficiency = 0;
};

// Bytes the mixed-precision Adam step reads and writes per parameter: the
// fp16 gradient (2) read, the fp32 master weight, m and v read and written
// (24), the fp16 weight written (2), and the gradient norm's read (2).
inline constexpr double kAdamBytesPerParameter = 30.0;

// One GEMM of batch × (m × k)·(k × n).
struct GemmShape {
  double m = 0;
  double n = 0;
  double k = 0;
  double batch = 1;
};

// Its time in ns: kernel overhead + max(FLOPs / (peak · e · u), bytes /
// (HBM · memory-bound efficiency)), e the GEMM max efficiency, u the best
// utilization over the profile's tiles (tm × tn): useful / launched work,
// where the batch·⌈m/tm⌉·⌈n/tn⌉ tiles run in waves of `sms`:
// u = batch·m·n / (⌈tiles/sms⌉ · sms · tm · tn). Bytes: A, B and C once at
// 2 bytes. A dtype the profile lacks is priced at 0 FLOP/s: callers check.
double gemmNs(const HardwareProfile& hw, const ClusterSettings& s, const GemmShape& g);
// A memory-bound pass over `bytes`, `kernels` launches.
double memoryBoundNs(const HardwareProfile& hw, double bytes, int32_t kernels);

// One part's op times per micro-batch, ns.
struct PartOpNs {
  double forward = 0;
  double backwardInput = 0;
  double backwardWeight = 0;
  double flops = 0;  // forward FLOPs (the GEMMs), for the record
};
PartOpNs clusterBlockNs(const ModelConfig& m, const HardwareProfile& hw, const ClusterSettings& s,
                        int32_t microBatchSize, int32_t tp);
PartOpNs clusterEmbeddingNs(const ModelConfig& m, const HardwareProfile& hw,
                            int32_t microBatchSize, int32_t tp);
PartOpNs clusterHeadNs(const ModelConfig& m, const HardwareProfile& hw, const ClusterSettings& s,
                       int32_t microBatchSize, int32_t tp);

// The alpha-beta fits of every collective the layout runs, per dimension
// (tp, pp, dp, zero) and link, at the layout's group sizes, payload bytes
// in, ns out (ring algorithms; a group of g ranks, r of them per node):
//  same_host (NVLink), bus bandwidth B = nvlink_efficiency · nvlink;
//  other_host, B = min(nvlink_efficiency · nvlink, network_efficiency ·
//    nicBytesPerGpu · r): NCCL's rings cross nodes over the NICs of the r
//    GPUs a node holds of the group (one rail each), the bytes that cross
//    2(N−1)/N·S/r per NIC, as a hierarchical all-reduce's;
//  all-reduce: alpha 2(g−1)·L, beta 2(g−1)/g / B; reduce-scatter and
//    all-gather: (g−1)·L, (g−1)/g / B (bytes: the whole buffer); p2p: L,
//    1/B on NVLink; across nodes Megatron-LM's scatter-gather: each tp rank
//    sends 1/t over its own NIC, then an NVLink all-gather:
//    1/(t · network_efficiency · nicBytesPerGpu) + (t−1)/t / B_nvlink.
// L is the link's latency per step (nvlink_latency_us, latency_us).
std::vector<LinkFit> clusterLinkFits(const Layout& layout, const HardwareProfile& hw);

// The layout's ranks on nodes of hw.gpusPerNode, in rank order
// ("node0:8", "node1:8", ...): the hosts predictLayout places them on.
std::vector<std::string> clusterHosts(int64_t world, int32_t gpusPerNode);

// The calibration pricing `layout` on `hw`: the parts' op costs at its
// micro-batch size and tp, the optimizer per parameter, the link fits, the
// mixed-precision RunFormat (recompute of each layer). Name "hardware NAME".
Calibration clusterCalibration(const Layout& layout, const HardwareProfile& hw,
                               const ClusterSettings& s);

// predictLayout of `layout` on nodes of `hw` (hosts from clusterHosts)
// with clusterCalibration. Errors: an invalid layout, tp above the GPUs of
// a node, a dtype the profile has no peak for.
Result<Prediction> predictCluster(Layout layout, const HardwareProfile& hw,
                                  const ClusterSettings& s);

// Narayanan et al. (SC21) FLOPs of one iteration with activation recompute:
// 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)), B the global batch in sequences.
double megatronIterationFlops(const ModelConfig& m, int64_t globalBatch);

}  // namespace bubblescope::layout
