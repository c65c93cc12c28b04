// Int8Compressor: symmetric int8 quantisation with one fp32 scale per chunk
// of `chunkElements` and error feedback.
//
// Per chunk: scale = max |v| / 127 (v = grad + residual), code = round(v /
// scale) in [-127, 127], decoded = code * scale; so |v - decoded| <= scale / 2
// up to fp32 rounding. An all-zero chunk has scale 0 and codes 0.
// bytes = n + 4 ceil(n / chunkElements).
#pragma once

#include "engine/parallel/error_feedback.h"
#include "engine/parallel/grad_compressor.h"

namespace bubblescope::engine {

class Int8Compressor final : public GradCompressor {
 public:
  static constexpr int64_t kDefaultChunkElements = 1024;
  // elements: the bucket's n; chunkElements >= 1.
  Int8Compressor(int64_t elements, int64_t chunkElements = kDefaultChunkElements)
      : chunkElements_(chunkElements), feedback_(elements) {}
  const char* name() const override { return "int8"; }
  Status compress(std::span<const float> grad, CompressedGrad& out) override;
  Status decompress(const CompressedGrad& in, std::span<float> out) const override;
  std::span<const float> residual() const override { return feedback_.residual(); }

 private:
  int64_t chunkElements_;
  ErrorFeedback feedback_;
  std::vector<float> decoded_;  // (n) scratch
};

}  // namespace bubblescope::engine
