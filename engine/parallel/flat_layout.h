// FlatLayout: where each parameter of a model (or a layer range) sits in one
// contiguous buffer, and the two ways data parallelism cuts that buffer:
// shards (ZeRO: rank r owns one contiguous range) and gradient buckets.
//
// Pure arithmetic on element offsets; no buffers. Parameters are laid out in
// the model's canonical order (embedding, h.0 .. h.{L-1}, head), so a layer
// slot is one contiguous range and backward visits the buffer from its end
// to its start.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/gpt_model.h"

namespace bubblescope::engine {

// Half-open element range [lo, hi).
struct FlatRange {
  int64_t lo = 0;
  int64_t hi = 0;
  int64_t size() const { return hi > lo ? hi - lo : 0; }
  bool empty() const { return size() == 0; }
  FlatRange intersect(const FlatRange& o) const {
    return {std::max(lo, o.lo), std::max(std::max(lo, o.lo), std::min(hi, o.hi))};
  }
  bool operator==(const FlatRange&) const = default;
};

struct FlatEntry {
  Parameter* param = nullptr;
  FlatRange range;  // its elements in the flat buffer
  int32_t slot = 0;
};

// Which of a model's parameters a flat buffer holds: all of them, or (expert
// parallelism) those reduced over dp or those reduced over the
// expert-data-parallel group (Parameter::expert).
enum class ParameterGroup : uint8_t { kAll, kShared, kExperts };

class FlatLayout {
 public:
  explicit FlatLayout(GptModel& model, ParameterGroup group = ParameterGroup::kAll);

  int64_t total() const { return total_; }
  const std::vector<FlatEntry>& entries() const { return entries_; }
  // The slot's parameters (empty when the model does not hold the slot or
  // none of its parameters is in the group).
  FlatRange slotRange(int32_t slot) const;
  // The parameters whose elements meet `range`, each with the overlap.
  std::vector<std::pair<const FlatEntry*, FlatRange>> overlapping(const FlatRange& range) const;

 private:
  std::vector<FlatEntry> entries_;
  std::vector<FlatRange> slots_;  // by slot index
  int64_t total_ = 0;
};

// ZeRO partition of `total` elements over n ranks: rank r owns one
// contiguous range; sizes differ by at most one element.
class ShardPlan {
 public:
  ShardPlan(int64_t total, int32_t n) : total_(total), n_(n) {}
  int32_t ranks() const { return n_; }
  FlatRange shard(int32_t rank) const;
  // Elements of `range` in each rank's shard, in rank order: the counts of a
  // reduce-scatter or all-gather over `range`.
  std::vector<int> countsFor(const FlatRange& range) const;

 private:
  int64_t total_;
  int32_t n_;
};

// Gradient buckets: consecutive ranges of at most `capacity` elements cut
// from the end of the buffer (bucket 0 is the last `capacity` elements), so
// they fill in backward order. A bucket may split a parameter or a layer.
std::vector<FlatRange> planBuckets(int64_t total, int64_t capacity);

}  // namespace bubblescope::engine
