// Clock alignment: the offset of a rank's host clock to rank 0's, from
// ping-pong exchanges, and the track of those offsets that maps a rank's times
// onto rank 0's timeline. Pure maths; the MPI exchange is in mpi_clock_sync.h.
//
// One exchange: the rank reads its clock (t1), sends to rank 0, which
// answers with its own clock (tRef), and the rank reads its clock when the
// answer arrives (t2). If the two legs take equal time, rank 0's clock at the
// rank's (t1 + t2) / 2 was tRef, so offset = tRef − (t1 + t2) / 2, wrong by at
// most half the round trip (Cristian 1989). The rounds with the smallest
// round trips are the least disturbed; the estimate keeps those.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/result.h"

namespace bubblescope::tracer {

struct PingPong {
  int64_t sendNs = 0;     // t1, this rank's clock
  int64_t refNs = 0;      // tRef, rank 0's clock
  int64_t receiveNs = 0;  // t2, this rank's clock
  int64_t roundTripNs() const { return receiveNs - sendNs; }
};

// Offset to add to this rank's clock to get rank 0's, at local time atNs.
struct OffsetEstimate {
  int64_t atNs = 0;
  int64_t offsetNs = 0;
  int64_t uncertaintyNs = 0;  // half the largest round trip kept: a bound
};

// Uses the `keepFraction` of rounds with the smallest round trips (at least
// one) and takes the median of their offsets; the uncertainty is half the
// largest round trip among them. Fails on no rounds or a round
// whose answer arrived before it was sent.
Result<OffsetEstimate> estimateOffset(std::span<const PingPong> rounds,
                                      double keepFraction = 0.125);

// The offsets measured through a run, and the map of this rank's times onto
// rank 0's. Between two consecutive kept estimates a and b the offset is
// linear (drift corrected) when they differ by more than a.u + b.u, and
// otherwise the middle of the intersection of their intervals [o - u, o + u]
// (their mean when a.u = b.u; a difference that noise explains is not taken
// for drift, so durations are not bent by it, and one estimate with slow
// round trips does not pull the offset away from a tight one). Either way a time between a and b is
// mapped within 2·max(a.u, b.u) of the truth if the drift is linear between them. A segment grows
// (its last estimate is replaced) until it is kMinSegmentNs long, so a slope is never fitted over a
// short baseline. Outside the estimates the nearest segment's map is extended (one estimate: its
// offset). The tracer measures again before it ships what it drained, so every shipped time lies
// between two estimates. Value type; not thread-safe.
class ClockTrack {
 public:
  static constexpr int64_t kMinSegmentNs = 1'000'000'000;

  // Estimates come in increasing atNs; one not after the last is ignored.
  void add(const OffsetEstimate& estimate);
  bool empty() const { return estimates_.empty(); }
  // Precondition: !empty().
  int64_t toReference(int64_t localNs) const;
  // A bound on the error of every time mapped between two estimates: 2 × the
  // largest uncertainty of every estimate added (with one estimate, its own).
  int64_t uncertaintyNs() const {
    return estimates_.size() < 2 ? uncertaintyNs_ : 2 * uncertaintyNs_;
  }
  const std::vector<OffsetEstimate>& estimates() const { return estimates_; }

 private:
  std::vector<OffsetEstimate> estimates_;
  int64_t uncertaintyNs_ = 0;
};

}  // namespace bubblescope::tracer
