// Allocator: hands out aligned host buffers and counts their bytes by category.
//
// Contract: one Allocator per rank (instance-based, never global) so each rank
// can report its own memory. It must outlive every tensor allocated from it.
// Not thread-safe: a rank's training thread owns it. Counts are in bytes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace bubblescope::engine {

enum class MemoryCategory : int32_t {
  kParameters = 0,
  kGradients = 1,
  kOptimizerState = 2,
  kActivations = 3,
  kOther = 4,
};
inline constexpr int32_t kMemoryCategoryCount = 5;

std::string_view toString(MemoryCategory category);  // "parameters", "gradients", ...

class Allocator {
 public:
  Allocator() = default;
  Allocator(const Allocator&) = delete;
  Allocator& operator=(const Allocator&) = delete;

  // Returns a 64-byte aligned, zero-filled buffer of `bytes` bytes (never
  // null; bytes 0 gives a valid unique pointer). Free it with release().
  void* allocate(size_t bytes, MemoryCategory category);
  // Frees a buffer from allocate() with the same size and category.
  void release(void* ptr, size_t bytes, MemoryCategory category);

  int64_t currentBytes(MemoryCategory category) const { return current_[index(category)]; }
  int64_t peakBytes(MemoryCategory category) const { return peak_[index(category)]; }
  int64_t totalCurrentBytes() const;
  // Peak of the total (not the sum of the per-category peaks).
  int64_t totalPeakBytes() const { return totalPeak_; }

 private:
  static size_t index(MemoryCategory c) { return static_cast<size_t>(c); }
  std::array<int64_t, kMemoryCategoryCount> current_{};
  std::array<int64_t, kMemoryCategoryCount> peak_{};
  int64_t totalPeak_ = 0;
};

}  // namespace bubblescope::engine
