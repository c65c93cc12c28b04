#include "trace_model/interval_set.h"

#include <algorithm>

namespace bubblescope::trace_model {
namespace {

// Appends [s, e) to a normalised list whose last start is <= s.
void appendMerged(std::vector<Interval>& out, int64_t s, int64_t e) {
  if (e <= s) return;
  if (!out.empty() && s <= out.back().endNs) {
    out.back().endNs = std::max(out.back().endNs, e);
  } else {
    out.push_back({s, e});
  }
}

}  // namespace

IntervalSet IntervalSet::fromUnsorted(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& a, const Interval& b) { return a.startNs < b.startNs; });
  std::vector<Interval> out;
  out.reserve(intervals.size());
  for (const Interval& i : intervals) appendMerged(out, i.startNs, i.endNs);
  return IntervalSet(std::move(out));
}

IntervalSet IntervalSet::unite(const IntervalSet& other) const {
  const auto& a = intervals_;
  const auto& b = other.intervals_;
  std::vector<Interval> out;
  out.reserve(a.size() + b.size());
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    const bool takeA = j == b.size() || (i < a.size() && a[i].startNs <= b[j].startNs);
    const Interval& next = takeA ? a[i++] : b[j++];
    appendMerged(out, next.startNs, next.endNs);
  }
  return IntervalSet(std::move(out));
}

IntervalSet IntervalSet::intersect(const IntervalSet& other) const {
  const auto& a = intervals_;
  const auto& b = other.intervals_;
  std::vector<Interval> out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const int64_t s = std::max(a[i].startNs, b[j].startNs);
    const int64_t e = std::min(a[i].endNs, b[j].endNs);
    if (s < e) out.push_back({s, e});
    if (a[i].endNs < b[j].endNs) {
      ++i;
    } else {
      ++j;
    }
  }
  return IntervalSet(std::move(out));
}

IntervalSet IntervalSet::subtract(const IntervalSet& other) const {
  const auto& b = other.intervals_;
  std::vector<Interval> out;
  size_t j = 0;
  for (const Interval& a : intervals_) {
    int64_t s = a.startNs;
    while (j < b.size() && b[j].endNs <= s) ++j;
    size_t k = j;
    while (k < b.size() && b[k].startNs < a.endNs) {
      if (b[k].startNs > s) out.push_back({s, b[k].startNs});
      s = std::max(s, b[k].endNs);
      ++k;
    }
    if (s < a.endNs) out.push_back({s, a.endNs});
  }
  return IntervalSet(std::move(out));
}

IntervalSet IntervalSet::clip(int64_t t0Ns, int64_t t1Ns) const {
  std::vector<Interval> out;
  auto it = std::lower_bound(intervals_.begin(), intervals_.end(), t0Ns,
                             [](const Interval& i, int64_t t) { return i.endNs <= t; });
  for (; it != intervals_.end() && it->startNs < t1Ns; ++it) {
    appendMerged(out, std::max(it->startNs, t0Ns), std::min(it->endNs, t1Ns));
  }
  return IntervalSet(std::move(out));
}

int64_t IntervalSet::totalNs() const {
  int64_t total = 0;
  for (const Interval& i : intervals_) total += i.endNs - i.startNs;
  return total;
}

}  // namespace bubblescope::trace_model
