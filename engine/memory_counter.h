// MemoryCounter: the bytes an allocator has handed out and not yet taken
// back, and their peaks, by MemoryCategory. The one count behind every
// allocator (engine/allocator.h for host memory and the back ends derived from
// it, engine/cuda/device_allocator.h), so memory reports and gauges read them
// all the same way.
//
// Contract: add() belongs to one thread (the allocator's owner, the rank's
// training thread); the counts may be read from any thread (the tracer's
// gauges) while it runs. Counts are in bytes.
#pragma once

#include <array>
#include <atomic>
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

class MemoryCounter {
 public:
  // `deltaBytes` more (an allocation) or fewer (a release, negative) bytes of
  // `category`; raises the peaks.
  void add(MemoryCategory category, int64_t deltaBytes);

  int64_t currentBytes(MemoryCategory category) const {
    return current_[index(category)].load(std::memory_order_relaxed);
  }
  int64_t peakBytes(MemoryCategory category) const {
    return peak_[index(category)].load(std::memory_order_relaxed);
  }
  int64_t totalCurrentBytes() const;
  // Peak of the total (not the sum of the per-category peaks).
  int64_t totalPeakBytes() const { return totalPeak_.load(std::memory_order_relaxed); }
  // Starts the peaks again from the current counts.
  void resetPeaks();

 private:
  static size_t index(MemoryCategory c) { return static_cast<size_t>(c); }
  // Written by the owning thread only; atomic so other threads may read.
  std::array<std::atomic<int64_t>, kMemoryCategoryCount> current_{};
  std::array<std::atomic<int64_t>, kMemoryCategoryCount> peak_{};
  std::atomic<int64_t> totalPeak_{0};
};

}  // namespace bubblescope::engine
