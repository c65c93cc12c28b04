#include "engine/parallel/flat_layout.h"

#include <algorithm>

namespace bubblescope::engine {

FlatLayout::FlatLayout(GptModel& model, ParameterGroup group) {
  slots_.assign(model.slotCount(), FlatRange{});
  for (Parameter* p : model.parameters()) {
    if (group != ParameterGroup::kAll && p->expert != (group == ParameterGroup::kExperts)) continue;
    const int32_t slot = model.slotOf(p);
    const FlatRange range{total_, total_ + p->value.numel()};
    entries_.push_back({p, range, slot});
    FlatRange& s = slots_[slot];
    if (s.empty()) s = range;
    s.hi = range.hi;
    total_ = range.hi;
  }
}

FlatRange FlatLayout::slotRange(int32_t slot) const {
  if (slot < 0 || slot >= static_cast<int32_t>(slots_.size())) return {};
  return slots_[slot];
}

std::vector<std::pair<const FlatEntry*, FlatRange>> FlatLayout::overlapping(
    const FlatRange& range) const {
  std::vector<std::pair<const FlatEntry*, FlatRange>> out;
  // Entries are sorted by offset: find the first that ends after range.lo.
  auto it = std::upper_bound(entries_.begin(), entries_.end(), range.lo,
                             [](int64_t lo, const FlatEntry& e) { return lo < e.range.hi; });
  for (; it != entries_.end() && it->range.lo < range.hi; ++it) {
    const FlatRange piece = it->range.intersect(range);
    if (!piece.empty()) out.emplace_back(&*it, piece);
  }
  return out;
}

FlatRange ShardPlan::shard(int32_t rank) const {
  const int64_t base = total_ / n_, extra = total_ % n_;
  const int64_t lo = rank * base + std::min<int64_t>(rank, extra);
  return {lo, lo + base + (rank < extra ? 1 : 0)};
}

std::vector<int> ShardPlan::countsFor(const FlatRange& range) const {
  std::vector<int> counts(n_);
  for (int32_t r = 0; r < n_; ++r) counts[r] = static_cast<int>(shard(r).intersect(range).size());
  return counts;
}

std::vector<FlatRange> planBuckets(int64_t total, int64_t capacity) {
  std::vector<FlatRange> buckets;
  capacity = std::max<int64_t>(1, capacity);
  for (int64_t hi = total; hi > 0; hi -= capacity) {
    buckets.push_back({std::max<int64_t>(0, hi - capacity), hi});
  }
  return buckets;
}

}  // namespace bubblescope::engine
