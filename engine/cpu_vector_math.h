// Branch-free float maths the compiler can vectorise, and the attribute that
// builds a loop for AVX-512, AVX2 + FMA and the x86-64 baseline, picked at
// load time by the CPU (GCC's target_clones; elsewhere one portable build).
// Not under ThreadSanitizer: the clones' resolver runs while the dynamic
// loader relocates, before TSan's runtime is up, and TSan instruments it
// (the test binaries crashed at load).
//
// vexp(x): e^x for x in [-87, 88] (clamped there) by Cody–Waite reduction
// x = n ln2 + r, |r| <= ln2 / 2, a degree-7 Taylor polynomial of e^r (error
// |r|^8 / 8! < 6e-9, below half an ulp of fp32) and 2^n built in the
// exponent bits: within 2 ulp of std::exp in fp32, no libm call, so loops
// using it vectorise. laneSum: a sum whose loop vectorises.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    !defined(__SANITIZE_THREAD__)
#define BS_VECTOR_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define BS_VECTOR_CLONES
#endif

namespace bubblescope::engine::kernels {

inline float vexp(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693145751953125f;  // ln 2 = kLn2Hi + kLn2Lo, kLn2Hi exact in 12 bits
  constexpr float kLn2Lo = 1.42860682030941723e-6f;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  x = std::clamp(x, -87.0f, 88.0f);
  const float n = (x * kLog2e + kRound) - kRound;
  const float r = (x - n * kLn2Hi) - n * kLn2Lo;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  return p * std::bit_cast<float>(bits);
}

// Σ term(i) for i in [0, n), added in kSumLanes interleaved partial sums
// (lane l takes i ≡ l mod kSumLanes) then the lanes and the tail in order:
// the same terms as a sequential sum in another order, so its loop
// vectorises (a compiler keeps a sequential float sum sequential).
inline constexpr int kSumLanes = 16;
template <class S, class Term>
inline S laneSum(int64_t n, Term&& term) {
  S lanes[kSumLanes] = {};
  int64_t i = 0;
  for (; i + kSumLanes <= n; i += kSumLanes) {
    for (int l = 0; l < kSumLanes; ++l) lanes[l] += term(i + l);
  }
  S sum = 0;
  for (int l = 0; l < kSumLanes; ++l) sum += lanes[l];
  for (; i < n; ++i) sum += term(i);
  return sum;
}

}  // namespace bubblescope::engine::kernels
