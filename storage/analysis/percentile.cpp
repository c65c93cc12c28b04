#include "storage/analysis/percentile.h"

#include <algorithm>

namespace bubblescope::analysis {

int64_t percentileOf(const std::vector<int64_t>& sorted, int32_t p) {
  const int64_t n = static_cast<int64_t>(sorted.size());
  const int64_t q = std::clamp<int64_t>(p, 0, 100);
  const int64_t rank = std::max<int64_t>(1, (q * n + 99) / 100);  // ceil(q·n / 100), at least 1
  return sorted[static_cast<size_t>(std::min(rank, n) - 1)];
}

}  // namespace bubblescope::analysis
