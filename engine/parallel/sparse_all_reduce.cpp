#include "engine/parallel/sparse_all_reduce.h"

#include <algorithm>
#include <string>

namespace bubblescope::engine {

Status SparseAllReduce::start(Communicator& comm, const CompressedGrad& mine,
                              const CommTrace& trace) {
  k_ = static_cast<int>(mine.indices.size());
  elements_ = mine.elements;
  if (mine.values.size() != mine.indices.size()) {
    return Status::invalidArgument("sparse all-reduce: " + std::to_string(mine.indices.size()) +
                                   " indices and " + std::to_string(mine.values.size()) +
                                   " values");
  }
  comm_ = &comm;
  const int n = comm.size();
  const std::vector<int> counts(n, k_);
  // At least one element of storage: k = 0 still needs buffers.
  allIndices_.assign(std::max(n * k_, 1), 0);
  allValues_.assign(std::max(n * k_, 1), 0.0f);
  CommTrace t = trace;
  t.name = kSparseIndicesName;
  BS_ASSIGN_OR_RETURN(indices_, comm.startAllGather(ElementType::kInt32, mine.indices.data(),
                                                    allIndices_.data(), counts, t));
  t.name = kSparseValuesName;
  BS_ASSIGN_OR_RETURN(values_, comm.startAllGather(ElementType::kFloat32, mine.values.data(),
                                                   allValues_.data(), counts, t));
  return Status::ok();
}

Status SparseAllReduce::finish(std::span<float> sum) {
  if (comm_ == nullptr) return Status::failedPrecondition("sparse all-reduce: finish before start");
  const Status indices = comm_->wait(indices_);
  const Status values = comm_->wait(values_);
  BS_RETURN_IF_ERROR(indices);
  BS_RETURN_IF_ERROR(values);
  if (static_cast<int64_t>(sum.size()) != elements_) {
    return Status::invalidArgument("sparse all-reduce: " + std::to_string(sum.size()) +
                                   " outputs for " + std::to_string(elements_) + " elements");
  }
  std::fill(sum.begin(), sum.end(), 0.0f);
  const int total = comm_->size() * k_;
  for (int j = 0; j < total; ++j) {
    const int32_t i = allIndices_[j];
    if (i < 0 || i >= elements_) {
      return Status::corrupt("sparse all-reduce: rank " + std::to_string(j / std::max(k_, 1)) +
                             " sent index " + std::to_string(i) + " outside the " +
                             std::to_string(elements_) + " elements");
    }
    sum[i] += allValues_[j];
  }
  return Status::ok();
}

Status sparseAllReduce(Communicator& comm, const CompressedGrad& mine, std::span<float> sum,
                       const CommTrace& trace) {
  if (static_cast<int64_t>(sum.size()) != mine.elements) {
    return Status::invalidArgument("sparse all-reduce: " + std::to_string(mine.indices.size()) +
                                   " indices, " + std::to_string(mine.values.size()) + " values, " +
                                   std::to_string(sum.size()) + " outputs for " +
                                   std::to_string(mine.elements) + " elements");
  }
  SparseAllReduce reduction;
  BS_RETURN_IF_ERROR(reduction.start(comm, mine, trace));
  return reduction.finish(sum);
}

}  // namespace bubblescope::engine
