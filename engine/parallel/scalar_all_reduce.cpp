#include "engine/parallel/scalar_all_reduce.h"

namespace bubblescope::engine {

Status allReduceScalar(Communicator& group, Backend& backend, double& value,
                       const CommTrace& trace) {
  if (backend.device() == Device::kHost) {
    return group.allReduce(std::span<double>(&value, 1), trace);
  }
  TensorT<double> staged({1}, MemoryCategory::kOther, &backend.allocator());
  backend.copyToDevice(staged.data(), &value, sizeof(double));
  BS_RETURN_IF_ERROR(group.allReduce(std::span<double>(staged.data(), 1), trace));
  return backend.copyToHost(&value, staged.data(), sizeof(double));
}

}  // namespace bubblescope::engine
