// Closed-form expectations the measured metrics are shown beside.
//
// Contract: pure functions; each returns std::nullopt when a needed input is
// unknown or out of range, so the report shows no formula rather than a wrong
// one. Sources are cited at each function (see /work/shared/REFERENCE.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "storage/analysis/layout_facts.h"

namespace bubblescope::analysis {

// Pipeline bubble as a share of the step, for schedule `schedule` with p
// stages, m micro-batches and v chunks per rank.
//   gpipe, 1f1b: (p−1)/(m+p−1)       (GPipe; Narayanan et al. 2021)
//   interleaved: (p−1)/(v·m+p−1)     (Narayanan et al. 2021, arXiv 2104.04473)
//   zb-h1:       (p−1)/(3m+p−1)      (Qi et al., arXiv 2401.10241: bubble
//                (p−1)(t_F+t_B−t_W) with t_F = t_B = t_W = t, step 3mt + bubble,
//                i.e. a third of 1F1B's idle time)
std::optional<double> bubbleFormula(const std::string& schedule, int32_t p, int32_t m,
                                    int32_t v = 1);
// The same from a layout; a layout without pp is a single stage (bubble 0).
std::optional<double> bubbleFormula(const LayoutFacts& layout);
// The formula as text, e.g. "(p-1)/(m+p-1) = 3/11"; empty when unknown.
std::string bubbleFormulaText(const LayoutFacts& layout);

// fp32 Adam model states per rank in bytes (ZeRO, arXiv 1910.02054, with the
// fp32 CPU engine's 4-byte weights, 4-byte gradients and 8-byte Adam moments,
// REFERENCE.md): with N_d = dp and Ψ_rank the rank's share of parameters,
//   parameters 4Ψ (stage 3: 4Ψ/N_d); gradients 4Ψ (stage ≥ 2: 4Ψ/N_d);
//   optimizer 8Ψ (stage ≥ 1: 8Ψ/N_d).
struct ModelStateBytes {
  double parameters = 0;
  double gradients = 0;
  double optimizer = 0;
};
std::optional<ModelStateBytes> zeroModelStateBytes(int64_t psiRank, layout::ZeroStage zeroStage,
                                                   int32_t dp);

// Ψ_rank = Ψ / (tp·pp): an even split of the model over the model-parallel
// ranks (exact when tp·pp = 1; embeddings make pipeline splits uneven, and
// tensor parallelism leaves layer norms, embeddings and the head whole).
std::optional<double> parametersPerRank(const LayoutFacts& layout);
// Ψ of one rank: the count the rank stored (ranks.parameters, its stage's
// layers with its tp slices), else the even split above.
std::optional<double> parametersOfRank(const LayoutFacts& layout, int64_t storedParameters);

// Bytes per element of parameters and gradients in the engine (fp32).
inline constexpr double kBytesPerElement = 4.0;

// Communication volume per rank per step in bytes. Volume counts an
// all-reduce as twice its payload (a reduce-scatter then an all-gather) and
// every other collective or transfer as its payload; the ring factor (n−1)/n
// is left out, as REFERENCE.md's 2Ψ does.
//   data parallel (dims dp + zero): 2Ψ_rank elements, ZeRO-3 3Ψ_rank
//     (ZeRO paper §7; parameters gathered in forward and in backward);
//   tp: 4 all-reduces of b·s·h per layer per micro-batch (2 forward, 2
//     backward; Megatron-LM arXiv 1909.08053), layers/pp layers per rank:
//     8·b·s·h·(L/pp)·m elements;
//   pp: each chunk boundary a micro-batch crosses moves b·s·h elements, once
//     forward and once backward, counted at the sender and at the receiver.
// (dataParallelVolumeBytes with psiRank uses that rank's Ψ instead of the even split.)
std::optional<double> dataParallelVolumeBytes(const LayoutFacts& layout);
std::optional<double> dataParallelVolumeBytes(const LayoutFacts& layout,
                                              std::optional<double> psiRank);
std::optional<double> tensorParallelVolumeBytes(const LayoutFacts& layout);
std::optional<double> pipelineVolumeBytes(const LayoutFacts& layout, int32_t stage);

}  // namespace bubblescope::analysis
