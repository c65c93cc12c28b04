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

void* Allocator::allocate(size_t bytes, MemoryCategory category) {
  const size_t rounded = std::max<size_t>(64, (bytes + 63) / 64 * 64);
  void* ptr = ::operator new(rounded, kAlignment);
  std::memset(ptr, 0, rounded);
  auto& cur = current_[index(category)];
  cur += static_cast<int64_t>(bytes);
  peak_[index(category)] = std::max(peak_[index(category)], cur);
  totalPeak_ = std::max(totalPeak_, totalCurrentBytes());
  return ptr;
}

void Allocator::release(void* ptr, size_t bytes, MemoryCategory category) {
  if (ptr == nullptr) return;
  ::operator delete(ptr, kAlignment);
  current_[index(category)] -= static_cast<int64_t>(bytes);
}

int64_t Allocator::totalCurrentBytes() const {
  int64_t total = 0;
  for (int64_t b : current_) total += b;
  return total;
}

}  // namespace bubblescope::engine
