#include "engine/parallel/sparse_all_reduce.h"

#include <algorithm>
#include <bit>
#include <string>
#include <vector>

namespace bubblescope::engine {

Status sparseAllReduce(Communicator& comm, const CompressedGrad& mine, std::span<float> sum,
                       const CommTrace& trace) {
  const auto k = static_cast<int>(mine.indices.size());
  if (mine.values.size() != mine.indices.size() ||
      static_cast<int64_t>(sum.size()) != mine.elements) {
    return Status::invalidArgument("sparse all-reduce: " + std::to_string(mine.indices.size()) +
                                   " indices, " + std::to_string(mine.values.size()) + " values, " +
                                   std::to_string(sum.size()) + " outputs for " +
                                   std::to_string(mine.elements) + " elements");
  }
  const int n = comm.size();
  const std::vector<int> counts(n, k);
  std::vector<float> indexBits(k);  // (k) this rank's indices as float32 bit patterns
  for (int j = 0; j < k; ++j) indexBits[j] = std::bit_cast<float>(mine.indices[j]);
  // At least one element of storage: k = 0 still needs buffers.
  std::vector<float> allIndices(std::max(n * k, 1)), allValues(std::max(n * k, 1));  // (n, k)
  CommTrace t = trace;
  t.name = kSparseIndicesName;
  BS_RETURN_IF_ERROR(comm.allGather(indexBits, std::span(allIndices.data(), n * k), counts, t));
  t.name = kSparseValuesName;
  BS_RETURN_IF_ERROR(comm.allGather(mine.values, std::span(allValues.data(), n * k), counts, t));
  std::fill(sum.begin(), sum.end(), 0.0f);
  for (int j = 0; j < n * k; ++j) {
    const auto i = std::bit_cast<int32_t>(allIndices[j]);
    if (i < 0 || i >= mine.elements) {
      return Status::corrupt("sparse all-reduce: rank " + std::to_string(j / std::max(k, 1)) +
                             " sent index " + std::to_string(i) + " outside the " +
                             std::to_string(mine.elements) + " elements");
    }
    sum[i] += allValues[j];
  }
  return Status::ok();
}

}  // namespace bubblescope::engine
