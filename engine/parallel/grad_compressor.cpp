#include "engine/parallel/grad_compressor.h"

#include <algorithm>
#include <cmath>

#include "engine/parallel/half_cast_compressor.h"
#include "engine/parallel/int8_compressor.h"
#include "engine/parallel/power_sgd_compressor.h"
#include "engine/parallel/top_k_compressor.h"

namespace bubblescope::engine {

int64_t CompressedGrad::bytes() const {
  return static_cast<int64_t>(halves.size() * sizeof(uint16_t) + codes.size() * sizeof(int8_t) +
                              scales.size() * sizeof(float) + indices.size() * sizeof(int32_t) +
                              values.size() * sizeof(float));
}

Result<std::unique_ptr<GradCompressor>> makeGradCompressor(const GradCompressionSpec& spec,
                                                           const GradShape& shape) {
  if (shape.elements < 0 || shape.elements > INT32_MAX) {
    return Status::invalidArgument("grad compression: a bucket of " +
                                   std::to_string(shape.elements) + " elements");
  }
  switch (spec.kind) {
    case GradCompression::kNone:
      return std::unique_ptr<GradCompressor>(new NoCompressor());
    case GradCompression::kFp16:
    case GradCompression::kBf16:
      return std::unique_ptr<GradCompressor>(
          new HalfCastCompressor(spec.kind == GradCompression::kBf16));
    case GradCompression::kInt8:
      return std::unique_ptr<GradCompressor>(new Int8Compressor(shape.elements));
    case GradCompression::kTopK:
      if (!(spec.ratio > 0.0) || spec.ratio > 1.0) {
        return Status::invalidArgument("topk: ratio " + std::to_string(spec.ratio) +
                                       " is not in (0, 1]");
      }
      return std::unique_ptr<GradCompressor>(new TopKCompressor(shape.elements, spec.ratio));
    case GradCompression::kPowerSgd:
      if (shape.rows < 1 || shape.cols < 1 || shape.rows * shape.cols != shape.elements) {
        return Status::invalidArgument(
            "powersgd: needs a matrix-shaped gradient, got " + std::to_string(shape.rows) + " x " +
            std::to_string(shape.cols) + " for " + std::to_string(shape.elements) + " elements");
      }
      if (spec.rank < 1 || spec.rank > std::min(shape.rows, shape.cols)) {
        return Status::invalidArgument("powersgd: rank " + std::to_string(spec.rank) +
                                       " is not in [1, min(" + std::to_string(shape.rows) + ", " +
                                       std::to_string(shape.cols) + ")]");
      }
      return std::unique_ptr<GradCompressor>(
          new PowerSgdCompressor(shape.rows, shape.cols, spec.rank));
  }
  return Status::internal("grad compression: unknown kind");
}

Status checkDecodedSize(const CompressedGrad& in, std::span<float> out, const char* who) {
  if (static_cast<int64_t>(out.size()) != in.elements) {
    return Status::invalidArgument(std::string(who) + ": decoding " + std::to_string(in.elements) +
                                   " elements into " + std::to_string(out.size()));
  }
  return Status::ok();
}

Status NoCompressor::compress(std::span<const float> grad, CompressedGrad& out) {
  out = CompressedGrad{};
  out.elements = static_cast<int64_t>(grad.size());
  out.values.assign(grad.begin(), grad.end());
  return Status::ok();
}

Status NoCompressor::decompress(const CompressedGrad& in, std::span<float> out) const {
  if (Status s = checkDecodedSize(in, out, name()); !s.isOk()) return s;
  if (in.values.size() != out.size()) {
    return Status::invalidArgument("none: " + std::to_string(in.values.size()) + " values for " +
                                   std::to_string(out.size()) + " elements");
  }
  std::copy(in.values.begin(), in.values.end(), out.begin());
  return Status::ok();
}

}  // namespace bubblescope::engine
