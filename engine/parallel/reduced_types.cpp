#include "engine/parallel/reduced_types.h"

#include <algorithm>
#include <cmath>

#include "engine/parallel/half_cast_compressor.h"

namespace bubblescope::engine {

void addHalves(const uint16_t* in, uint16_t* inout, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    inout[i] = floatToHalf(halfToFloat(in[i]) + halfToFloat(inout[i]));
}

void addBf16s(const uint16_t* in, uint16_t* inout, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    inout[i] = floatToBf16(bf16ToFloat(in[i]) + bf16ToFloat(inout[i]));
}

float quantizeInt8Chunk(std::span<const float> v, int8_t* codes) {
  float maxAbs = 0.0f;
  for (float x : v) maxAbs = std::max(maxAbs, std::fabs(x));
  const float scale = maxAbs / 127.0f;
  for (size_t i = 0; i < v.size(); ++i) {
    const float code = scale > 0.0f ? std::nearbyint(v[i] / scale) : 0.0f;
    codes[i] = static_cast<int8_t>(std::clamp(code, -127.0f, 127.0f));
  }
  return scale;
}

void addInt8Blocks(const Int8Block* in, Int8Block* inout, int64_t n) {
  float sum[kInt8BlockElements];
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t i = 0; i < kInt8BlockElements; ++i) {
      sum[i] = static_cast<float>(in[b].codes[i]) * in[b].scale +
               static_cast<float>(inout[b].codes[i]) * inout[b].scale;
    }
    inout[b].scale = quantizeInt8Chunk(sum, inout[b].codes);
  }
}

}  // namespace bubblescope::engine
