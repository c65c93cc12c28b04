// gradReductionCost(): one step's data-parallel gradient reduction, predicted
// for each way the gradients can travel (issue 19, grad_comm.h): compressed
// (fp16, bf16, int8, topk:R, powersgd:R) or not, flat or hierarchical, on one
// node or over an inter-node link, emulated (Gb/s + latency, the engine's
// sender-side pacing) or real (the calibration's `other_host` fits).
// docs/prediction.md, "Gradient compression and hierarchical all-reduce".
//
// Bytes are ring bus bytes (what one rank puts on the links, nccl-tests
// factors, docs/formulas.md), per step:
//  - none: one all-reduce of 4n per bucket, 2(p-1)/p · 4n;
//  - fp16 / bf16: 2(p-1)/p · 2n; int8: 2(p-1)/p · 1028 · ceil(n_b/1024) per
//    bucket of n_b (1024 int8 codes + an fp32 scale);
//  - topk:R: two all-gathers per bucket (k = ceil(R n_b) int32 indices and
//    fp32 values of every rank), (p-1) · 8k per bucket;
//  - powersgd:R: an all-reduce of [P | the rest] and one of Q, 2(p-1)/p ·
//    4 (Σ rows·R + rest + Σ cols·R); a matrix is factorised when
//    R <= min(rows, cols), R (rows + cols) < rows·cols and no bucket boundary
//    cuts it (the engine's rule; the buckets as the engine cuts them, full
//    ones from the end of the flat buffer of `tensors`);
//  - hierarchical (K ranks per node, N = p/K nodes, uncompressed): a
//    reduce-scatter in the node, an all-reduce of 4n/K across the N nodes, an
//    all-gather in the node; only 2(N-1)/N · 4n/K cross nodes instead of the
//    flat ring's 2(p-1)/p · 4n.
// Times: each collective from the calibration's alpha-beta fit (dim "dp",
// else another dimension's, as predictLayout), scaled from the fit's group
// size to the collective's by the ring: alpha by its steps (2(p-1) for an
// all-reduce, p-1 otherwise), beta by the bus factor. A reduce-scatter or
// all-gather with no fit costs half an all-reduce of the same bytes. An
// emulated link adds, per ring step that crosses nodes, the latency and the
// chunk's bytes · 8 / Gb/s (link_pacer.h). Encoding, decoding and error
// feedback are compute (`codecNs`): ns per gradient element from the
// calibration (kCodecPart below) or else the constants measured with `bench
// allreduce` (measuredCodecCosts, docs/parallel.md); the part of them the
// calibration measured inside the collectives (kCodecReduceSuffix) is
// communication (`commNs`).
//
// Pure; no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "planning/calibration.h"
#include "engine/layout/grad_comm.h"
#include "engine/layout/layout.h"
#include "engine/layout/model_config.h"

namespace bubblescope::layout {

// How the dp group sits on nodes and what joins them.
struct NodeLink {
  int32_t ranksPerNode = 0;  // K consecutive dp ranks per node; 0: one node holds the group
  double interNodeGbps = 0;  // > 0: an emulated link of 10^9 bit/s (or latency > 0)
  double interNodeLatencyUs = 0;
  bool emulated() const { return interNodeGbps > 0 || interNodeLatencyUs > 0; }
  // N = group / K nodes; 1 when K is 0, does not divide the group or is >= it.
  int32_t nodes(int32_t group) const;
};

// A matrix-shaped gradient (rows, cols), as the engine's parameters are.
struct MatrixShape {
  int64_t rows = 0;
  int64_t cols = 0;
};

struct GradReductionInput {
  GradCompressionSpec compression;
  AllReduceAlgorithm algorithm = AllReduceAlgorithm::kFlat;
  NodeLink link;
  int32_t group = 1;           // p: the dp ranks
  double elements = 0;         // n: gradient elements this rank reduces per step
  int64_t bucketElements = 0;  // bucket capacity (0: one bucket of all n)
  // The gradients in flat-buffer order, a vector as (n, 1) (PowerSGD).
  std::vector<MatrixShape> tensors;
  bool cpuTime = false;  // calibration costs in thread CPU time
  // What the encoding's compute is multiplied by: the prediction's
  // time-sharing and background (core_sharing.h, contention.h).
  double computeScale = 1;
  // The group's ranks time-share their host's cores (core_sharing.h): the
  // collectives inside a node take the calibration's shared_cores fits.
  bool sharedCores = false;
};

struct GradReductionCost {
  // The collectives: what the reduction op waits on, with the codec's work
  // inside them (kCodecReduceSuffix).
  double commNs = 0;
  double codecNs = 0;            // encoding, decoding, error feedback (compute)
  double sentBytes = 0;          // bus bytes this rank puts on the links per step
  double uncompressedBytes = 0;  // those of the flat fp32 all-reduce of the same n
  double interNodeBytes = 0;     // bus bytes of the busiest rank over the inter-node link
  std::vector<std::string> warnings;
  double totalNs() const { return commNs + codecNs; }
  // uncompressed / sent (1 when nothing is sent).
  double compressionRatio() const { return sentBytes > 0 ? uncompressedBytes / sentBytes : 1.0; }
};

GradReductionCost gradReductionCost(const GradReductionInput& in, const Calibration& c);

// The part of a step's bucketed gradient reduction (`reductionNs` for all
// its buckets, C) that the step waits for when the buckets overlap the
// stage's last backward (`lastBackwardNs`, T_b): K = ceil(gradientBytes /
// bucketBytes) buckets (at least 1), ready evenly over that backward and
// reduced one after another at C/K each, finish max(C/K, C − T_b·(K−1)/K)
// after it. The exposed dp communication of an overlapped reduction.
double exposedOverlappedReductionNs(double reductionNs, double gradientBytes, double bucketBytes,
                                    double lastBackwardNs);

// The input's compression, algorithm, node link and group from a layout
// (all_reduce, ranks_per_node as K / (tp x pp) dp ranks per emulated node,
// inter_node_gbps and inter_node_latency_us; the elements and tensors are
// the caller's: they depend on the stage).
GradReductionInput gradReductionInput(const Layout& layout);

// The gradients of a stage chunk on one tp rank in the engine's flat order
// (engine/gpt_layers.cpp; vectors as (n, 1)): wte (V, C), wpe (T, C) with the
// embedding; per dense block ln_1, attn.qkv (3C/t, C) and bias, attn.proj
// (C, C/t) and bias, ln_2, mlp.fc (F/t, C) and bias, mlp.proj (C, F/t) and
// bias (an MoE block's router and experts as one vector); ln_f and lm_head
// (V, C) with the head.
std::vector<MatrixShape> gradTensors(const ModelConfig& model, int32_t tp, int32_t firstLayer,
                                     int32_t layers, bool embedding, bool head);

// The calibration part of the compressors' costs: op the kind's name
// ("fp16", "bf16", "int8", "topk", "powersgd"), micro-batch size the
// PowerSGD rank R (0 for the others), ns per gradient element and step.
inline constexpr const char* kCodecPart = "grad_compression";
// The op of the part of a kind's cost that runs inside its collectives
// (the kind's name and this suffix, e.g. "int8_reduce"; engine/parallel/
// codec_benchmark.h): the reduced type's sums, which a trace shows inside
// the collective's span. With it the cost's codecNs is the rest and commNs
// holds this part (exposed data-parallel communication, as `report`
// measures it); without it all of the cost is codecNs.
inline constexpr const char* kCodecReduceSuffix = "_reduce";

// Those costs as measured on the development machine with `bench allreduce
// --ranks 2 --model small` (docs/parallel.md): the engine's time minus the
// uncompressed reduction's share of its bytes, over the elements.
Calibration measuredCodecCosts();

}  // namespace bubblescope::layout
