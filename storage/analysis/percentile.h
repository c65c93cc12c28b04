// percentileOf: the nearest-rank percentile, the one definition the GPU
// tables use (kernel_breakdown.h, launch_stats.h; docs/analysis.md).
//
// The p-th percentile (p in 0..100) of n values sorted ascending is the
// smallest value with at least p% of the values at or below it: the value of
// 1-based rank ceil(p·n / 100), and the smallest value for p = 0. It is
// always one of the values (never interpolated): the p95 of 20 values is the
// 19th, of 10 values the 10th. Computed in integers, so no rounding decides
// a rank.
//
// Contract: `sorted` ascending and not empty; p outside 0..100 is clamped.
#pragma once

#include <cstdint>
#include <vector>

namespace bubblescope::analysis {

int64_t percentileOf(const std::vector<int64_t>& sorted, int32_t p);

}  // namespace bubblescope::analysis
