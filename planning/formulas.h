// The closed-form expectations every module shows a run beside: pipeline
// bubble, parameters per rank, ZeRO model-state bytes, communication volume
// per parallel dimension. The one definition of each (the analysis, the GUI,
// the CLI and the simulator call these).
//
// Contract: pure functions of a valid Layout (layout.h); sources are cited at
// each function (docs/formulas.md derives each). docs/analysis.md says exactly what each
// counts. Sizes are elements unless a name says bytes.
#pragma once

#include <cstdint>
#include <string>

#include "engine/layout/layout.h"

namespace bubblescope::layout {

// Bytes per element of parameters and gradients in the engine (fp32), and of
// the scalars the optimizer reduces (the clipping norm, a double).
inline constexpr double kBytesPerElement = 4.0;
inline constexpr double kBytesPerScalar = 8.0;
// ZeRO stages 2 and 3 keep at most this many gradient buckets in flight
// (DeepSpeed's double-buffered reduction buckets); the engine obeys it.
inline constexpr int32_t kZeroBucketsInFlight = 2;

// ---- Pipeline bubble -----------------------------------------------------------

// The bubble fraction (idle share of the step per stage) the papers predict
// (docs/formulas.md, "Pipeline schedules"):
//  gpipe, 1f1b:  (p-1)/(m+p-1)                     (Huang et al.; Narayanan et al.)
//  interleaved:  (p-1)/(v·m+p-1)                   (Narayanan et al. 2021)
//  zb-h1:        (p-1)/(3m+p-1), i.e. a third of 1F1B's idle time at
//                t_F = t_B = t_W: (p-1)(t_F+t_B-t_W) (Qi et al. 2024)
// v is ignored except for interleaved. Requires p >= 1, m >= 1.
double formulaBubble(ScheduleKind kind, int32_t p, int32_t m, int32_t v = 1);
// The same for a layout (one stage: 0).
double formulaBubble(const Layout& layout);
// The formula with its numbers, e.g. "(p-1)/(m+p-1) = 3/11 = 0.273";
// "one stage: 0" when pp = 1.
std::string bubbleFormulaText(const Layout& layout);

// ---- Parameters ------------------------------------------------------------------

// Ψ_rank = Ψ / (tp·pp): an even split of the model over the model-parallel
// ranks (exact when tp·pp = 1; embeddings make pipeline splits uneven, and
// tensor parallelism leaves layer norms, embeddings and the head whole).
double parametersPerRank(const Layout& layout);
// The parameters of the largest layer slot (embedding, one block, or final
// norm + head; the unit ZeRO-3 gathers), unsliced: exact at tp = 1, an upper
// bound under tensor parallelism.
int64_t largestSlotParameters(const ModelConfig& model);

// ---- ZeRO model states -------------------------------------------------------------

// fp32 AdamW model states per rank in bytes (ZeRO, arXiv 1910.02054, with the
// engine's 4-byte weights, 4-byte gradients and 8-byte Adam moments,
// docs/formulas.md), with N_d = dp and Ψ = psiRank:
//   kept between steps: parameters 4Ψ (stage 3: 4Ψ/N_d); gradients 4Ψ
//   (stage >= 2: 4Ψ/N_d); optimizer 8Ψ (stage >= 1: 8Ψ/N_d);
//   transient, the most a step adds on top (upper bounds, 4 bytes each):
//   parameters: stage 3 gathers one slot at a time: S (largestSlotParameters);
//   gradients: stage 1 receives its reduced piece of every bucket, at most
//     its whole shard ⌈Ψ/N_d⌉ at once; stages 2 and 3 hold the slot in
//     backward, its bucket copies and reduced pieces: with overlap
//     S + (f+2)·B + (f+1)·min(B, ⌈Ψ/N_d⌉) (B = min(bucket elements, Ψ): a
//     bucket holds at most the gradients there are; f =
//     kZeroBucketsInFlight: f+1 launched, one partly filled; a reduced piece
//     is the bucket ∩ this rank's contiguous shard, up to the whole bucket),
//     without overlap every bucket at the step's end: S + Ψ + ⌈Ψ/N_d⌉.
// The peak a rank measures lies in [kept, kept + transient] per category.
struct ModelStateBytes {
  double parameters = 0;
  double gradients = 0;
  double optimizer = 0;
  double transientParameters = 0;
  double transientGradients = 0;
};
ModelStateBytes zeroModelStateBytes(const Layout& layout, double psiRank);
// The same with other element sizes: bytes per parameter, per gradient and
// of optimizer state per parameter (the engine: 4, 4, 8; a mixed-precision
// run: 2, 2, 12, ZeRO's 16Ψ in all).
ModelStateBytes zeroModelStateBytes(const Layout& layout, double psiRank, double parameterBytes,
                                    double gradientBytes, double optimizerBytes);

// ---- Communication volume -----------------------------------------------------------

// Bytes a rank moves per step. An all-reduce counts twice its payload (a
// reduce-scatter then an all-gather), every other collective or transfer its
// payload (the whole gathered or scattered buffer); the ring factor (n−1)/n
// is left out, as ZeRO's 2Ψ per all-reduce does.
//
// Data parallel (dims dp + zero), Ψ = psiRank, m micro-batches, c model
// chunks on the rank; 0 when dp = 1:
//   stage 0: 2Ψ (one all-reduce after the last micro-batch);
//   stage 1: Ψ + Ψ (reduce-scatter once, all-gather of the updated shards);
//   stage 2: m·Ψ + Ψ (gradients are sharded, so every micro-batch's are
//            reduce-scattered as backward produces them; one all-gather);
//   stage 3: 3m·Ψ (every micro-batch gathers each slot's parameters for its
//            forward and again for its backward, and reduce-scatters its
//            gradients: ZeRO §7's 3Ψ per forward and backward pass; with
//            recompute, which the pipeline executor runs, 4m·Ψ: the forward
//            runs again and gathers again);
//   plus all-reduces of one double each (8 bytes, counted twice): the step's
//   loss, and at stages >= 1 each chunk's squared gradient norm (clipping).
// (ZeRO counts 3Ψ per step for stage 3 with one micro-batch; gradient
// accumulation repeats the gathers and reductions per micro-batch, as
// DeepSpeed's ZeRO-3 does.)
//   stage 0 with the hierarchical all-reduce, K dp ranks per node: Ψ + 2Ψ/K + Ψ
//            (the reduce-scatter inside the node, the all-reduce of the
//            rank's 1/K shard across nodes, the all-gather inside the node):
//            more bytes than flat's 2Ψ in all, 2Ψ/K of them across nodes.
//            K: ranks_per_node / (tp·pp) when nodes are emulated, else the
//            dp ranks sharing rank `rank`'s host as the hosts place them.
double dataParallelVolumeBytes(const Layout& layout, double psiRank, int32_t rank = 0);
// tp: 4 all-reduces of b·s·h per layer per micro-batch (2 forward, 2
// backward; Megatron-LM arXiv 1909.08053), L/pp layers per rank:
// 8·b·s·h·(L/pp)·m elements.
double tensorParallelVolumeBytes(const Layout& layout);
// pp: each chunk boundary a micro-batch crosses moves b·s·h elements, once
// forward and once backward, counted at the sender and at the receiver.
// Requires 0 <= stage < pp.
double pipelineVolumeBytes(const Layout& layout, int32_t stage);

}  // namespace bubblescope::layout
