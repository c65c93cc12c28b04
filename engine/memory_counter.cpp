#include "engine/memory_counter.h"

#include <algorithm>

namespace bubblescope::engine {

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

void MemoryCounter::add(MemoryCategory category, int64_t deltaBytes) {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  auto& current = current_[index(category)];
  const int64_t now = current.load(kRelaxed) + deltaBytes;
  current.store(now, kRelaxed);
  auto& peak = peak_[index(category)];
  peak.store(std::max(peak.load(kRelaxed), now), kRelaxed);
  totalPeak_.store(std::max(totalPeak_.load(kRelaxed), totalCurrentBytes()), kRelaxed);
}

int64_t MemoryCounter::totalCurrentBytes() const {
  int64_t total = 0;
  for (const auto& c : current_) total += c.load(std::memory_order_relaxed);
  return total;
}

void MemoryCounter::resetPeaks() {
  for (size_t c = 0; c < current_.size(); ++c) {
    peak_[c].store(current_[c].load(std::memory_order_relaxed), std::memory_order_relaxed);
  }
  totalPeak_.store(totalCurrentBytes(), std::memory_order_relaxed);
}

}  // namespace bubblescope::engine
