// The trace samples of a mixture-of-experts run (docs/trace-format.md,
// "samples"): per step and MoE block, for every expert the assignments
// routed to it (kept + dropped) and those dropped over its capacity, and
// the block's aux loss (mean over the step's micro-batches). One sample of
// each per step, at the step's end time:
//   "moe.h<block>.routed.e<expert>", "moe.h<block>.dropped.e<expert>",
//   "moe.h<block>.aux_loss".
// The one definition of the names: `train` writes them, the analysis reads them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace bubblescope::layout {

enum class MoeSeries { kRouted, kDropped, kAuxLoss };

struct MoeSampleKey {
  int32_t block = 0;  // h.<block>
  MoeSeries series = MoeSeries::kRouted;
  int32_t expert = -1;  // routed and dropped only

  bool operator==(const MoeSampleKey&) const = default;
};

std::string moeSampleName(const MoeSampleKey& key);
// nullopt: not an MoE sample name (or a malformed one).
std::optional<MoeSampleKey> parseMoeSampleName(const std::string& name);

}  // namespace bubblescope::layout
