#include "storage/analysis/launch_stats.h"

#include <algorithm>

#include "storage/analysis/percentile.h"

namespace bubblescope::analysis {

bool isHtaLaunchCall(std::string_view name) {
  return name == "cudaLaunchKernel" || name == "cudaLaunchKernelExC" || name == "cudaMemcpyAsync" ||
         name == "cudaMemsetAsync";
}

void LaunchStatsBuilder::add(const LaunchCall& call, int64_t recordStartNs, int64_t recordEndNs) {
  delays_.push_back(std::max<int64_t>(0, recordStartNs - call.endNs));
  if (recordEndNs - recordStartNs < call.endNs - call.startNs) ++shorter_;
}

void LaunchStatsBuilder::merge(LaunchStatsBuilder&& other) {
  delays_.insert(delays_.end(), other.delays_.begin(), other.delays_.end());
  shorter_ += other.shorter_;
  other.delays_.clear();
  other.shorter_ = 0;
}

std::optional<LaunchStats> LaunchStatsBuilder::finish() {
  if (delays_.empty()) return std::nullopt;
  std::sort(delays_.begin(), delays_.end());
  LaunchStats s;
  s.launches = static_cast<int64_t>(delays_.size());
  s.delayP50Ns = percentileOf(delays_, 50);
  s.delayP95Ns = percentileOf(delays_, 95);
  s.delayMaxNs = delays_.back();
  double sum = 0;
  for (int64_t d : delays_) sum += static_cast<double>(d);
  s.delayMeanNs = sum / static_cast<double>(delays_.size());
  s.shorterThanLaunch = shorter_;
  std::vector<int64_t>().swap(delays_);
  return s;
}

}  // namespace bubblescope::analysis
