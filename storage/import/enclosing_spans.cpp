#include "storage/import/enclosing_spans.h"

#include <algorithm>

namespace bubblescope::import {

void EnclosingSpans::add(int64_t tid, int64_t startNs, int64_t endNs, size_t item) {
  spans_.push_back({tid, startNs, endNs, item});
}

void EnclosingSpans::seal() {
  std::stable_sort(spans_.begin(), spans_.end(),
                   [](const Span& a, const Span& b) { return a.startNs < b.startNs; });
  maxDurationNs_ = 0;
  for (const Span& s : spans_) maxDurationNs_ = std::max(maxDurationNs_, s.endNs - s.startNs);
}

std::vector<size_t> EnclosingSpans::at(int64_t tid, int64_t timeNs) const {
  std::vector<size_t> out;
  // The spans that began at or before timeNs, latest (innermost) first, that
  // are still open then; none began more than the longest span before it.
  auto it = std::upper_bound(spans_.begin(), spans_.end(), timeNs,
                             [](int64_t t, const Span& s) { return t < s.startNs; });
  while (it != spans_.begin()) {
    --it;
    if (timeNs - it->startNs > maxDurationNs_) break;
    if (it->tid == tid && it->endNs >= timeNs) out.push_back(it->item);
  }
  return out;
}

}  // namespace bubblescope::import
