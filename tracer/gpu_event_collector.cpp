#include "tracer/gpu_event_collector.h"

#include <algorithm>
#include <cstddef>
#include <string>

namespace bubblescope::tracer {

Status GpuEventCollector::collect(const StreamDims& dims, std::vector<trace_model::Event>& out) {
  for (const LaunchCall& call : source_.takeLaunches()) out.push_back(toEvent(call, rank_));
  std::vector<GpuActivity> activities = source_.take();
  if (activities.empty()) return Status::ok();
  constexpr size_t kFirst = 8, kMax = 64;
  for (const ClockPair& p : source_.clockPairs(4)) pairs_.push_back(p);
  if (pairs_.size() > kMax) {
    pairs_.erase(pairs_.begin() + kFirst,
                 pairs_.end() - static_cast<std::ptrdiff_t>(kMax - kFirst));
  }
  auto map = fitGpuClockMap(pairs_);
  if (!map.isOk()) return map.status().withContext("rank " + std::to_string(rank_));
  if (map->errorBoundNs > uncertaintyNs_.load()) uncertaintyNs_.store(map->errorBoundNs);
  for (const GpuActivity& a : activities) out.push_back(toEvent(a, *map, rank_, dims));
  return Status::ok();
}

}  // namespace bubblescope::tracer
