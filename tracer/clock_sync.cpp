#include "tracer/clock_sync.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

namespace bubblescope::tracer {

Result<OffsetEstimate> estimateOffset(std::span<const PingPong> rounds, double keepFraction) {
  if (rounds.empty()) return Status::invalidArgument("clock sync: no ping-pong rounds");
  std::vector<PingPong> sorted(rounds.begin(), rounds.end());
  for (const auto& r : sorted) {
    if (r.roundTripNs() < 0) {
      return Status::invalidArgument("clock sync: an answer arrived before its request was sent");
    }
  }
  std::sort(sorted.begin(), sorted.end(),
            [](const PingPong& a, const PingPong& b) { return a.roundTripNs() < b.roundTripNs(); });
  const size_t keep = std::max<size_t>(1, static_cast<size_t>(sorted.size() * keepFraction));
  std::vector<int64_t> offsets;
  int64_t sumMid = 0;
  for (size_t i = 0; i < keep; ++i) {
    const PingPong& r = sorted[i];
    // (t1 + t2) / 2 without overflow.
    const int64_t mid = r.sendNs + r.roundTripNs() / 2;
    offsets.push_back(r.refNs - mid);
    sumMid += (mid - sorted[0].sendNs);
  }
  std::nth_element(offsets.begin(), offsets.begin() + keep / 2, offsets.end());
  OffsetEstimate e;
  e.offsetNs = offsets[keep / 2];
  e.atNs = sorted[0].sendNs + sumMid / static_cast<int64_t>(keep);
  // Each kept round is within half its own round trip of the truth, so
  // their median is within half the largest kept round trip.
  e.uncertaintyNs = (sorted[keep - 1].roundTripNs() + 1) / 2;
  return e;
}

void ClockTrack::add(const OffsetEstimate& estimate) {
  if (!estimates_.empty() && estimate.atNs <= estimates_.back().atNs) return;
  uncertaintyNs_ = std::max(uncertaintyNs_, estimate.uncertaintyNs);
  const size_t n = estimates_.size();
  if (n >= 2 && estimates_[n - 1].atNs - estimates_[n - 2].atNs < kMinSegmentNs) {
    estimates_.back() = estimate;  // the last segment grows
  } else {
    estimates_.push_back(estimate);
  }
}

int64_t ClockTrack::toReference(int64_t localNs) const {
  if (estimates_.size() == 1) return localNs + estimates_[0].offsetNs;
  // The segment [a, b] holding localNs, or the first or last one.
  auto after = std::upper_bound(estimates_.begin() + 1, estimates_.end() - 1, localNs,
                                [](int64_t t, const OffsetEstimate& e) { return t < e.atNs; });
  const OffsetEstimate& a = *(after - 1);
  const OffsetEstimate& b = *after;
  const int64_t change = b.offsetNs - a.offsetNs;
  if (std::llabs(change) <= a.uncertaintyNs + b.uncertaintyNs) {
    // No drift shown: the offset lies in both estimates' intervals; the
    // middle of their intersection (the mean when their bounds are equal)
    // is within the tighter bound even when the other round trips were slow.
    const int64_t low = std::max(a.offsetNs - a.uncertaintyNs, b.offsetNs - b.uncertaintyNs);
    const int64_t high = std::min(a.offsetNs + a.uncertaintyNs, b.offsetNs + b.uncertaintyNs);
    return localNs + low + (high - low) / 2;
  }
  const double slope = static_cast<double>(change) / static_cast<double>(b.atNs - a.atNs);
  return localNs + a.offsetNs +
         static_cast<int64_t>(std::llround(slope * static_cast<double>(localNs - a.atNs)));
}

}  // namespace bubblescope::tracer
