// codecCosts(): the gradient compressors' encoding, reduction and decoding
// costs on this machine, as calibration entries (issue 35: predictions used
// constants measured once on a busy machine, and compressed layouts came out
// 28-41% slow). For each kind the cost model prices (fp16, bf16, int8,
// topk, powersgd at ranks 1 and 4), engine::measureCodecCost runs the
// engine's own reduction of one bucket of the model's gradients over a
// mirror group of 2 ranks (each element summed once, as a ring or
// recursive doubling does at 2; a larger group's sums travel in its link
// fit): the model's parameters in the engine's
// flat order (planning gradTensors: wte, wpe, each block's, the head's),
// whole tensors up to the engine's default bucket (25 MiB of fp32), at tp 1.
//
// Entries: part kCodecPart ("grad_compression"), op the kind's name,
// micro-batch size the PowerSGD rank (0 for the others; the cost model
// interpolates PowerSGD linearly in it), tp 1, wall and thread CPU ns per
// gradient element (the least of `repetitions` rounds), samples the
// repetitions; after each kind's entry a second one, op the kind's name +
// kCodecReduceSuffix ("int8_reduce"), the part of it measured inside the
// collectives (codec_benchmark.h). Top-K is measured at ratio 0.1 (its selection and its dense
// sum cost per element; the kept share changes only the gathered sets).
// With `progress`, one line per kind on stderr. Errors: measureCodecCost's.
#pragma once

#include <cstdint>
#include <vector>

#include "common/result.h"
#include "engine/layout/model_config.h"
#include "planning/calibration.h"

namespace bubblescope::cli {

Result<std::vector<layout::OpCostEntry>> codecCosts(const layout::ModelConfig& model, bool progress,
                                                    int32_t repetitions = 5);

// c with codecCosts(c.model) added (replacing entries of the same part, op,
// size and tp): what `calibrate` and `bench predict` store.
Status addCodecCosts(layout::Calibration& c, bool progress);

}  // namespace bubblescope::cli
