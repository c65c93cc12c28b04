// How the data-parallel gradients travel (issue 19): the compression of each
// bucket (`--grad-compression`, layout key `grad_compression`) and the
// all-reduce algorithm (`--allreduce flat|hierarchical`, `all_reduce`), with
// the nodes it is cut into and the emulated inter-node link. Pure values and
// their parsing; the engine (engine/parallel/bucket_reduction.h) runs them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace bubblescope::layout {

enum class GradCompression : uint8_t { kNone, kFp16, kBf16, kInt8, kTopK, kPowerSgd };

// "none", "fp16", "bf16", "int8", "topk", "powersgd" (the kind alone).
const char* gradCompressionKindName(GradCompression kind);

// `none|fp16|bf16|int8|topk:RATIO|powersgd:RANK`.
struct GradCompressionSpec {
  GradCompression kind = GradCompression::kNone;
  double ratio = 1.0;  // topk: the kept fraction of each bucket, in (0, 1]
  int32_t rank = 0;    // powersgd: the factorisation rank, >= 1
  std::string toString() const;
  bool compresses() const { return kind != GradCompression::kNone; }
  bool operator==(const GradCompressionSpec&) const = default;
};
// Errors name the text: "grad compression 'X' is unknown (known: ...)".
Result<GradCompressionSpec> parseGradCompression(std::string_view text);

enum class AllReduceAlgorithm : uint8_t { kFlat, kHierarchical };
const char* allReduceAlgorithmName(AllReduceAlgorithm algorithm);  // "flat", "hierarchical"
Result<AllReduceAlgorithm> parseAllReduceAlgorithm(std::string_view text);

}  // namespace bubblescope::layout
