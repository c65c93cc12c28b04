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

Status HierarchicalAllReduce::start(std::span<const float> grads, const CommTrace& trace) {
  const auto n = static_cast<int64_t>(grads.size());
  counts_ = evenCounts(n, intraNode_.size());
  // At least one element of storage: an empty shard (n < K) still needs a buffer.
  const int64_t need = std::max(counts_[intraNode_.rank()], 1);
  if (shard_.numel() != need) shard_ = Tensor({need}, MemoryCategory::kGradients, deviceMemory_);
  trace_ = trace;
  const std::span<float> shard(shard_.data(), counts_[intraNode_.rank()]);
  BS_ASSIGN_OR_RETURN(handle_, intraNode_.startReduceScatter(
                                   grads, shard, counts_, named(trace, kIntraReduceScatterName)));
  busBytes_ = engine::busBytes(CollectiveKind::kReduceScatter, 4 * n, intraNode_.size()) +
              engine::busBytes(CollectiveKind::kAllReduce, 4 * int64_t{counts_[intraNode_.rank()]},
                               interNode_.size()) +
              engine::busBytes(CollectiveKind::kAllGather, 4 * n, intraNode_.size());
  return Status::ok();
}

Status HierarchicalAllReduce::finish(std::span<float> sum) {
  BS_RETURN_IF_ERROR(intraNode_.wait(handle_));
  const std::span<float> shard(shard_.data(), counts_[intraNode_.rank()]);
  BS_RETURN_IF_ERROR(interNode_.allReduce(shard, named(trace_, kInterAllReduceName)));
  return intraNode_.allGather(shard, sum, counts_, named(trace_, kIntraAllGatherName));
}

Status HierarchicalAllReduce::allReduce(std::span<float> data, const CommTrace& trace) {
  BS_RETURN_IF_ERROR(start(data, trace));
  return finish(data);
}

}  // namespace bubblescope::engine
