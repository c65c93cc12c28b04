// spearmanRho(): Spearman's rank correlation of two samples of the same
// length: Pearson's correlation of their ranks, tied values taking the mean
// of the ranks they span. The one definition used where a predicted order
// is checked against a measured one (`plan --run`, `bench predict`).
// Contract: NaN when the samples differ in length, have fewer than 2
// values, hold a NaN, or one sample is constant (no order to compare);
// otherwise in [-1, 1]. O(n log n).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <vector>

namespace bubblescope {

// Ranks 1..n of v, ties at the mean of their ranks.
inline std::vector<double> averageRanks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> ranks(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double mean = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (size_t k = i; k <= j; ++k) ranks[order[k]] = mean;
    i = j + 1;
  }
  return ranks;
}

inline double spearmanRho(const std::vector<double>& a, const std::vector<double>& b) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  if (a.size() != b.size() || a.size() < 2) return kNaN;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) return kNaN;
  }
  const std::vector<double> ra = averageRanks(a), rb = averageRanks(b);
  const double mean = (static_cast<double>(a.size()) + 1.0) / 2.0;  // of ranks 1..n
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    sab += (ra[i] - mean) * (rb[i] - mean);
    saa += (ra[i] - mean) * (ra[i] - mean);
    sbb += (rb[i] - mean) * (rb[i] - mean);
  }
  if (saa <= 0 || sbb <= 0) return kNaN;
  return sab / std::sqrt(saa * sbb);
}

}  // namespace bubblescope
