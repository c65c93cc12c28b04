#include "engine/parallel/tp_group.h"

#include "engine/parallel/host_values_transfer.h"

namespace bubblescope::engine {

Status assembleTpShards(const std::vector<Parameter*>& params, NamedValues& values,
                        Communicator& tp, Backend* backend) {
  if (params.size() != values.size()) {
    return Status::invalidArgument("assembleTpShards: " + std::to_string(params.size()) +
                                   " parameters for " + std::to_string(values.size()) + " values");
  }
  if (tp.size() == 1) return Status::ok();
  for (size_t i = 0; i < params.size(); ++i) {
    const Parameter& p = *params[i];
    if (!p.shard.sharded()) continue;
    std::vector<float>& local = values[i].second;
    const int64_t n = static_cast<int64_t>(local.size());
    std::vector<float> slices(static_cast<size_t>(n * tp.size()));
    CommTrace trace;
    trace.name = "tp_param_all_gather";
    std::vector<int> counts(tp.size(), static_cast<int>(n));
    if (backend != nullptr) {
      BS_RETURN_IF_ERROR(
          allGatherHostValues(tp, *backend, local, slices, std::move(counts), trace));
    } else {
      BS_RETURN_IF_ERROR(tp.allGather(local, slices, std::move(counts), trace));
    }
    std::vector<float> full(static_cast<size_t>(shapeNumel(p.fullShape)));
    for (int32_t r = 0; r < tp.size(); ++r) {
      TensorShard shard = p.shard;
      shard.rank = r;
      copyShardIntoFull(slices.data() + r * n, p.fullShape, shard, full.data());
    }
    local = std::move(full);
  }
  return Status::ok();
}

}  // namespace bubblescope::engine
