// HalfCastCompressor: fp16 or bf16 cast of every element, round to nearest
// even (no error feedback; the reduction would accumulate in fp32).
// NaN stays NaN (quiet), infinities stay infinite, fp16 overflow (|x| >=
// 65520) becomes infinity, fp16 subnormals are kept.
#pragma once

#include "engine/parallel/grad_compressor.h"

namespace bubblescope::engine {

uint16_t floatToHalf(float value);  // IEEE binary16 bits, round to nearest even
float halfToFloat(uint16_t bits);   // exact
uint16_t floatToBf16(float value);  // bfloat16 bits, round to nearest even
float bf16ToFloat(uint16_t bits);   // exact

class HalfCastCompressor final : public GradCompressor {
 public:
  explicit HalfCastCompressor(bool bf16) : bf16_(bf16) {}
  const char* name() const override { return bf16_ ? "bf16" : "fp16"; }
  Status compress(std::span<const float> grad, CompressedGrad& out) override;
  Status decompress(const CompressedGrad& in, std::span<float> out) const override;

 private:
  bool bf16_;
};

}  // namespace bubblescope::engine
