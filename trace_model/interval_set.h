// IntervalSet: a set of half-open time intervals [startNs, endNs) kept sorted
// and disjoint, with union, intersection and difference.
//
// Contract: after construction every set is normalised (sorted by start,
// non-empty, no two intervals touching or overlapping), so totalNs() is the
// measure of the union. Building from n unsorted intervals is O(n log n); the
// set operations are linear merges, O(n + m). Value type, not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

namespace bubblescope::trace_model {

struct Interval {
  int64_t startNs = 0;
  int64_t endNs = 0;  // exclusive; an interval with endNs <= startNs is empty

  bool operator==(const Interval&) const = default;
};

class IntervalSet {
 public:
  IntervalSet() = default;
  // Normalises any list: sorts, drops empty intervals, merges overlaps.
  static IntervalSet fromUnsorted(std::vector<Interval> intervals);

  IntervalSet unite(const IntervalSet& other) const;
  IntervalSet intersect(const IntervalSet& other) const;
  IntervalSet subtract(const IntervalSet& other) const;  // this \ other
  // The part of the set inside [t0Ns, t1Ns).
  IntervalSet clip(int64_t t0Ns, int64_t t1Ns) const;

  int64_t totalNs() const;  // measure of the set
  bool empty() const { return intervals_.empty(); }
  const std::vector<Interval>& intervals() const { return intervals_; }

  bool operator==(const IntervalSet&) const = default;

 private:
  explicit IntervalSet(std::vector<Interval> normalised) : intervals_(std::move(normalised)) {}
  std::vector<Interval> intervals_;
};

}  // namespace bubblescope::trace_model
