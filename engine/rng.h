// Deterministic random numbers that give the same values on every platform
// (std::normal_distribution does not), so that initialisation and batches
// depend only on the seed.
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>

namespace bubblescope::engine {

// FNV-1a 64-bit hash of a string: turns parameter names into stream ids.
inline uint64_t hashName(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

// Mixes several 64-bit values into one seed (SplitMix64 finaliser per value).
inline uint64_t mixSeed(uint64_t a, uint64_t b) {
  uint64_t z = a ^ (b + 0x9E3779B97F4A7C15ULL + (a << 6) + (a >> 2));
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// SplitMix64 generator. Not thread-safe; cheap to copy.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}

  uint64_t nextU64() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(nextU64() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n); precondition n > 0.
  uint64_t below(uint64_t n) { return nextU64() % n; }
  // Standard normal (Box-Muller, one value per call).
  double normal() {
    const double u1 = 1.0 - uniform();  // (0, 1]
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  uint64_t state_;
};

}  // namespace bubblescope::engine
