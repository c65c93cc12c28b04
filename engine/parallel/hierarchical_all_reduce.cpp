#include "engine/parallel/hierarchical_all_reduce.h"

#include <algorithm>

namespace bubblescope::engine {

namespace {
CommTrace named(const CommTrace& trace, const char* name) {
  CommTrace t = trace;
  t.name = name;
  return t;
}
}  // namespace

Status HierarchicalAllReduce::allReduce(std::span<float> data, const CommTrace& trace) {
  const std::vector<int> counts = evenCounts(static_cast<int64_t>(data.size()), intraNode_.size());
  // At least one element of storage: an empty shard (n < K) still needs a buffer.
  shard_.resize(std::max(counts[intraNode_.rank()], 1));
  const std::span<float> shard(shard_.data(), counts[intraNode_.rank()]);
  if (Status s =
          intraNode_.reduceScatter(data, shard, counts, named(trace, kIntraReduceScatterName));
      !s.isOk()) {
    return s;
  }
  if (Status s = interNode_.allReduce(shard, named(trace, kInterAllReduceName)); !s.isOk()) {
    return s;
  }
  return intraNode_.allGather(shard, data, counts, named(trace, kIntraAllGatherName));
}

}  // namespace bubblescope::engine
