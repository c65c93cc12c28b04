#include "engine/allocator.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace bubblescope::engine {
namespace {
constexpr std::align_val_t kAlignment{64};
}  // namespace

std::string_view toString(MemoryCategory category) {
  switch (category) {
    case MemoryCategory::kParameters:
      return "parameters";
    case MemoryCategory::kGradients:
      return "gradients";
    case MemoryCategory::kOptimizerState:
      return "optimizer_state";
    case MemoryCategory::kActivations:
      return "activations";
    case MemoryCategory::kOther:
      return "other";
  }
  return "unknown";
}

const char* deviceName(Device device) {
  return device == Device::kCuda ? "cuda" : "cpu";
}

void* Allocator::rawAllocate(size_t bytes) {
  const size_t rounded = std::max<size_t>(64, (bytes + 63) / 64 * 64);
  void* ptr = ::operator new(rounded, kAlignment);
  std::memset(ptr, 0, rounded);
  return ptr;
}

void Allocator::rawRelease(void* ptr, size_t) {
  ::operator delete(ptr, kAlignment);
}

void* Allocator::allocate(size_t bytes, MemoryCategory category) {
  void* ptr = rawAllocate(bytes);
  constexpr auto kRelaxed = std::memory_order_relaxed;
  auto& cur = current_[index(category)];
  const int64_t now = cur.load(kRelaxed) + static_cast<int64_t>(bytes);
  cur.store(now, kRelaxed);
  auto& peak = peak_[index(category)];
  peak.store(std::max(peak.load(kRelaxed), now), kRelaxed);
  totalPeak_.store(std::max(totalPeak_.load(kRelaxed), totalCurrentBytes()), kRelaxed);
  return ptr;
}

void Allocator::release(void* ptr, size_t bytes, MemoryCategory category) {
  if (ptr == nullptr) return;
  rawRelease(ptr, bytes);
  auto& cur = current_[index(category)];
  cur.store(cur.load(std::memory_order_relaxed) - static_cast<int64_t>(bytes),
            std::memory_order_relaxed);
}

void Allocator::resetPeaks() {
  for (int32_t c = 0; c < kMemoryCategoryCount; ++c) {
    peak_[c].store(current_[c].load(std::memory_order_relaxed), std::memory_order_relaxed);
  }
  totalPeak_.store(totalCurrentBytes(), std::memory_order_relaxed);
}

int64_t Allocator::totalCurrentBytes() const {
  int64_t total = 0;
  for (const auto& b : current_) total += b.load(std::memory_order_relaxed);
  return total;
}

}  // namespace bubblescope::engine
