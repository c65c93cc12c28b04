// median(): the middle value of a sample, the mean of the two middle values
// when the count is even; 0 for an empty sample. The one definition used by
// the analysis (op costs, replays) and the benches' figures.
// Contract: takes the sample by value (it is partly reordered); O(n).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace bubblescope {

inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double upper = v[mid];
  if (v.size() % 2 == 1) return upper;
  return (upper + *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid))) / 2.0;
}

}  // namespace bubblescope
