#include "tracer/clock_sync.h"

#include <algorithm>
#include <cmath>
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
  std::sort(sorted.begin(), sorted.end(), [](const PingPong& a, const PingPong& b) {
    return a.roundTripNs() < b.roundTripNs();
  });
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

ClockModel fitClockModel(const OffsetEstimate& start) {
  return {start.atNs, start.offsetNs, 0.0, start.uncertaintyNs};
}

ClockModel fitClockModel(const OffsetEstimate& start, const OffsetEstimate& end) {
  ClockModel m = fitClockModel(start);
  const int64_t span = end.atNs - start.atNs;
  if (span > 0) m.drift = static_cast<double>(end.offsetNs - start.offsetNs) / span;
  m.uncertaintyNs = std::max(start.uncertaintyNs, end.uncertaintyNs);
  return m;
}

}  // namespace bubblescope::tracer
