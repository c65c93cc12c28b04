// KernelBreakdown: one rank's GPU records by HTA kernel type
// (trace_model/kernel_type.h, the only classification) and by name, and the
// spread of each name's total over the ranks (docs/analysis.md, "GPU
// kernels").
//
// Time here is summed duration (end − start of every record, overlapping
// ones each counted), as HTA's kernel breakdown sums "dur" per name and
// Nsight's cuda_gpu_kern_sum does; it is not the union the GPU time
// (gpu_time_analyzer.h) measures. A rank's GPU record time is the sum over
// its records of every type; a type's or a name's share divides by it.
// Per name: count, total, mean, min, max and the p50 and p95 of the
// durations (nearest rank, percentile.h).
//
// Contract: add() records in any order, then finish() once. Memory: 8 bytes
// per record (the durations, for the percentiles) until finish(), then a few
// numbers per distinct name. Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trace_model/event.h"
#include "trace_model/kernel_type.h"

namespace bubblescope::analysis {

inline constexpr size_t kKernelTypeCount = 4;
// How many kernels of each rank `report` lists unless told (--top-kernels).
inline constexpr int32_t kDefaultTopKernels = 10;

// The durations of one name's records on one rank.
struct KernelStats {
  std::string name;
  trace_model::KernelType type = trace_model::KernelType::kComputation;
  int64_t count = 0;
  int64_t totalNs = 0;
  int64_t minNs = 0;
  int64_t maxNs = 0;
  int64_t p50Ns = 0;
  int64_t p95Ns = 0;
  // The longest record (the first of them): where it ran, so the app can
  // show it on the timeline.
  int64_t longestStartNs = 0;
  trace_model::Lane longestLane = trace_model::Lane::kCompute;
  double meanNs() const { return count > 0 ? static_cast<double>(totalNs) / count : 0.0; }
};

struct KernelBreakdown {
  // Summed durations by type, indexed by KernelType.
  std::array<int64_t, kKernelTypeCount> nsByType{};
  std::array<int64_t, kKernelTypeCount> countByType{};
  // Every name, by total time descending (ties by name).
  std::vector<KernelStats> kernels;
  int64_t totalNs() const;
  int64_t ns(trace_model::KernelType t) const { return nsByType[static_cast<size_t>(t)]; }
};

class KernelBreakdownBuilder {
 public:
  // A record's type is its name's first record's.
  void add(std::string_view name, trace_model::KernelType type, int64_t startNs, int64_t endNs,
           trace_model::Lane lane);
  // Adds the records of `later` (added after this one's: a name keeps this
  // one's type and, on a tie, its longest record).
  void merge(KernelBreakdownBuilder&& later);
  KernelBreakdown finish();
  bool empty() const { return byName_.empty(); }

 private:
  struct Durations {
    trace_model::KernelType type;
    std::vector<int64_t> ns;
    int64_t longestNs = -1;
    int64_t longestStartNs = 0;
    trace_model::Lane longestLane = trace_model::Lane::kCompute;
  };
  std::map<std::string, Durations, std::less<>> byName_;
};

// A rank's kernels of type computation, communication or other (memory
// records have their own table: memory_copies.h; HTA's breakdown leaves
// them out too), the first `top` by total time (all when top < 0).
std::vector<const KernelStats*> topKernels(const KernelBreakdown& b, int32_t top);

// One name's total over the ranks that ran it (at least one record there).
struct KernelSpread {
  int32_t ranks = 0;
  int64_t minTotalNs = 0;
  int32_t minRank = 0;
  int64_t maxTotalNs = 0;
  int32_t maxRank = 0;
  double meanTotalNs = 0;
  // max / mean: 1 when every rank spends the same; a straggling kernel's is
  // above 1. 0 when the mean is 0.
  double maxOverMean() const { return meanTotalNs > 0 ? maxTotalNs / meanTotalNs : 0.0; }
};

// Each name's spread over `ranks` (rank, its breakdown); a rank appears once.
std::map<std::string, KernelSpread, std::less<>> kernelSpreads(
    const std::vector<std::pair<int32_t, const KernelBreakdown*>>& ranks);

}  // namespace bubblescope::analysis
