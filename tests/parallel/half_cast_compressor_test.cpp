// fp16 / bf16 casts: every representable value round-trips bit for bit, every
// other value lands within half an ulp, ties go to the even neighbour, and
// NaN / infinity / overflow follow IEEE.
#include "engine/parallel/half_cast_compressor.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>

namespace bubblescope::engine {
namespace {

constexpr uint16_t kHalfExpMask = 0x7C00;

bool isHalfNan(uint16_t h) {
  return (h & kHalfExpMask) == kHalfExpMask && (h & 0x3FF) != 0;
}
bool isBf16Nan(uint16_t b) {
  return (b & 0x7F80) == 0x7F80 && (b & 0x7F) != 0;
}

// The spacing of fp16 values around |x| (finite, below 65520).
double halfUlp(double x) {
  const double a = std::fabs(x);
  if (a < std::ldexp(1.0, -14)) return std::ldexp(1.0, -24);  // subnormal spacing
  return std::ldexp(1.0, static_cast<int>(std::floor(std::log2(a))) - 10);
}
double bf16Ulp(double x) {
  const double a = std::fabs(x);
  if (a < std::ldexp(1.0, -126)) return std::ldexp(1.0, -133);
  return std::ldexp(1.0, static_cast<int>(std::floor(std::log2(a))) - 7);
}

TEST(HalfCastTest, EveryFp16ValueRoundTripsExactly) {
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const auto h = static_cast<uint16_t>(bits);
    const float f = halfToFloat(h);
    if (isHalfNan(h)) {
      EXPECT_TRUE(std::isnan(f)) << bits;
      EXPECT_TRUE(isHalfNan(floatToHalf(f))) << bits;
      continue;
    }
    ASSERT_EQ(floatToHalf(f), h) << "fp16 bits " << bits << " = " << f;
  }
  EXPECT_EQ(halfToFloat(0x3C00), 1.0f);
  EXPECT_EQ(halfToFloat(0x7BFF), 65504.0f);
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
}

TEST(HalfCastTest, EveryBf16ValueRoundTripsExactly) {
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const auto b = static_cast<uint16_t>(bits);
    const float f = bf16ToFloat(b);
    if (isBf16Nan(b)) {
      EXPECT_TRUE(std::isnan(f));
      EXPECT_TRUE(isBf16Nan(floatToBf16(f)));
      continue;
    }
    ASSERT_EQ(floatToBf16(f), b) << "bf16 bits " << bits;
  }
}

TEST(HalfCastTest, Fp16RoundsToNearestWithinHalfAnUlpTiesToEven) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> logMag(-26.0, 15.999);
  for (int i = 0; i < 200000; ++i) {
    const float x = static_cast<float>((i % 2 ? -1.0 : 1.0) * std::exp2(logMag(rng)));
    const uint16_t h = floatToHalf(x);
    const double r = halfToFloat(h);
    ASSERT_FALSE(std::isinf(r)) << x;
    const double err = std::fabs(r - static_cast<double>(x));
    // Half the spacing at the result's binade (the smaller one at a binade edge).
    const double bound = 0.5 * std::min(halfUlp(x), halfUlp(r == 0.0 ? x : r));
    ASSERT_LE(err, bound) << "x " << x << " -> " << r;
    if (err == bound) {
      ASSERT_EQ(h & 1, 0) << "tie of " << x << " not rounded to even";
    }
  }
  // Exact ties: the midpoint of two neighbours goes to the even one.
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3C00);      // 1 + ulp/2 -> 1
  EXPECT_EQ(floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);  // 1 + 3ulp/2 -> 1 + 2ulp
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000);             // half the smallest subnormal
  EXPECT_EQ(floatToHalf(std::ldexp(3.0f, -25)), 0x0002);             // 1.5 subnormals -> 2
  EXPECT_EQ(floatToHalf(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  EXPECT_EQ(floatToHalf(65519.0f), 0x7BFF);  // below the overflow midpoint
  EXPECT_EQ(floatToHalf(65520.0f), 0x7C00);  // the midpoint to 2^16 rounds to even: infinity
  EXPECT_EQ(floatToHalf(-1e9f), 0xFC00);
  EXPECT_EQ(floatToHalf(INFINITY), 0x7C00);
  EXPECT_TRUE(isHalfNan(floatToHalf(NAN)));
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
}

TEST(HalfCastTest, Bf16RoundsToNearestWithinHalfAnUlpTiesToEven) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> logMag(-125.0, 127.0);
  for (int i = 0; i < 200000; ++i) {
    const float x = static_cast<float>((i % 2 ? -1.0 : 1.0) * std::exp2(logMag(rng)));
    const uint16_t b = floatToBf16(x);
    const double r = bf16ToFloat(b);
    if (std::isinf(r)) {  // only above the largest bf16's upper midpoint
      ASSERT_GE(std::fabs(x), std::ldexp(255.5, 120)) << x;
      continue;
    }
    const double err = std::fabs(r - static_cast<double>(x));
    const double bound = 0.5 * std::min(bf16Ulp(x), bf16Ulp(r));
    ASSERT_LE(err, bound) << "x " << x << " -> " << r;
    if (err == bound) {
      ASSERT_EQ(b & 1, 0) << "tie of " << x << " not rounded to even";
    }
  }
  EXPECT_EQ(floatToBf16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);        // tie -> even (1)
  EXPECT_EQ(floatToBf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);    // tie -> even (1 + 2ulp)
  EXPECT_EQ(floatToBf16(std::bit_cast<float>(0x7F7FFFFFu)), 0x7F80);  // FLT_MAX -> infinity
  EXPECT_TRUE(isBf16Nan(floatToBf16(NAN)));
  EXPECT_TRUE(isBf16Nan(floatToBf16(std::bit_cast<float>(0x7F800001u))));  // signalling stays NaN
}

#ifdef __FLT16_MAX__
// The compiler's own float -> _Float16 conversion (round to nearest even) as
// an independent oracle, on every float bit pattern with a stride.
TEST(HalfCastTest, Fp16AgreesWithTheCompilersConversion) {
  for (uint64_t bits = 0; bits <= 0xFFFFFFFFull; bits += 4099) {
    const float x = std::bit_cast<float>(static_cast<uint32_t>(bits));
    const auto expected = std::bit_cast<uint16_t>(static_cast<_Float16>(x));
    const uint16_t got = floatToHalf(x);
    if (std::isnan(x)) {
      ASSERT_TRUE(isHalfNan(got));
    } else {
      ASSERT_EQ(got, expected) << "float bits " << bits;
    }
  }
}
#endif

TEST(HalfCastTest, CompressorsSendTwoBytesAnElementAndDecodeTheCast) {
  const std::vector<float> grad = {1.0f, -2.5f, 0.1f, 70000.0f, NAN, 1e-8f, 3.14159f};
  for (bool bf16 : {false, true}) {
    HalfCastCompressor c(bf16);
    CompressedGrad packed;
    ASSERT_TRUE(c.compress(grad, packed).isOk());
    EXPECT_EQ(packed.bytes(), 2 * static_cast<int64_t>(grad.size()));
    std::vector<float> out(grad.size());
    ASSERT_TRUE(c.decompress(packed, out).isOk());
    for (size_t i = 0; i < grad.size(); ++i) {
      const float want =
          bf16 ? bf16ToFloat(floatToBf16(grad[i])) : halfToFloat(floatToHalf(grad[i]));
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(out[i]));
      } else {
        EXPECT_EQ(out[i], want) << i;
      }
    }
    EXPECT_EQ(out[0], 1.0f);
    EXPECT_EQ(out[1], -2.5f);
    EXPECT_TRUE(c.residual().empty());
    std::vector<float> wrong(3);
    EXPECT_FALSE(c.decompress(packed, wrong).isOk());
  }
}

}  // namespace
}  // namespace bubblescope::engine
