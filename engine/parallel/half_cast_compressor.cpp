#include "engine/parallel/half_cast_compressor.h"

#include <bit>
#include <cmath>
#include <string>

namespace bubblescope::engine {

namespace {
// Rounds `mantissa` right by `shift` bits (1..31), to nearest, ties to even.
uint32_t shiftRoundEven(uint32_t mantissa, int shift) {
  const uint32_t kept = mantissa >> shift;
  const uint32_t rest = mantissa & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  return kept + ((rest > half || (rest == half && (kept & 1u))) ? 1u : 0u);
}
}  // namespace

uint16_t floatToHalf(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) return sign | 0x7E00u;   // NaN: quiet
  if (abs >= 0x477FF000u) return sign | 0x7C00u;  // >= 65520 (or inf): infinity
  const int exponent = static_cast<int>(abs >> 23) - 127;
  if (exponent < -25) return sign;  // below half the smallest subnormal: zero
  const uint32_t mantissa = (abs & 0x7FFFFFu) | 0x800000u;  // 24 bits, value = m 2^(e-23)
  if (exponent >= -14) {
    // Normal: a carry out of the 10 mantissa bits moves into the exponent.
    const uint32_t rounded = shiftRoundEven(mantissa, 13) - 0x400u;  // drop the hidden bit
    return static_cast<uint16_t>(sign | ((static_cast<uint32_t>(exponent + 15) << 10) + rounded));
  }
  // Subnormal: the value in units of 2^-24 is m 2^(e+1); a carry to 0x400 is
  // the smallest normal's encoding.
  return static_cast<uint16_t>(sign | shiftRoundEven(mantissa, -(exponent + 1)));
}

float halfToFloat(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1Fu;
  const uint32_t mantissa = bits & 0x3FFu;
  if (exponent == 0x1Fu) return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
  if (exponent == 0) {
    const float v = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

uint16_t floatToBf16(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u)
    return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  return static_cast<uint16_t>(
      shiftRoundEven(x, 16));  // a carry rounds up to the next binade / inf
}

float bf16ToFloat(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

Status HalfCastCompressor::compress(std::span<const float> grad, CompressedGrad& out) {
  out = CompressedGrad{};
  out.elements = static_cast<int64_t>(grad.size());
  out.halves.resize(grad.size());
  for (size_t i = 0; i < grad.size(); ++i) {
    out.halves[i] = bf16_ ? floatToBf16(grad[i]) : floatToHalf(grad[i]);
  }
  return Status::ok();
}

Status HalfCastCompressor::decompress(const CompressedGrad& in, std::span<float> out) const {
  if (Status s = checkDecodedSize(in, out, name()); !s.isOk()) return s;
  if (in.halves.size() != out.size()) {
    return Status::invalidArgument(std::string(name()) + ": " + std::to_string(in.halves.size()) +
                                   " halves for " + std::to_string(out.size()) + " elements");
  }
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = bf16_ ? bf16ToFloat(in.halves[i]) : halfToFloat(in.halves[i]);
  }
  return Status::ok();
}

}  // namespace bubblescope::engine
