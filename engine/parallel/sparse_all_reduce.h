// sparseAllReduce: the reduction of Top-K sparse sets (issue 19): every rank
// all-gathers the others' indices and values, then sums them into a dense
// buffer. What crosses the link is 8 k bytes per rank, not 4 n.
//
// Contract: every rank of `comm` calls it with a CompressedGrad of the same
// `elements` n and the same k (TopKCompressor of one bucket size and ratio);
// `sum` has n elements and receives, for every element, the sum of the
// values the ranks sent for it, added in rank order (0 where none did).
// Indices travel as int32 elements. Traced as two all-gathers named
// kSparseIndicesName and kSparseValuesName.
#pragma once

#include <span>
#include <vector>

#include "engine/parallel/communicator.h"
#include "engine/parallel/grad_compressor.h"

namespace bubblescope::engine {

inline constexpr const char* kSparseIndicesName = "all_gather.topk_indices";
inline constexpr const char* kSparseValuesName = "all_gather.topk_values";

// The reduction in two halves, so the all-gathers run while the caller
// computes: start() launches both (non-blocking), finish() waits and sums.
// `mine` must stay alive and unchanged from start() until finish(); start()
// and finish() alternate.
class SparseAllReduce {
 public:
  Status start(Communicator& comm, const CompressedGrad& mine, const CommTrace& trace = {});
  Status finish(std::span<float> sum);

 private:
  Communicator* comm_ = nullptr;
  int64_t elements_ = 0;
  int k_ = 0;
  std::vector<int32_t> allIndices_;  // (ranks, k)
  std::vector<float> allValues_;     // (ranks, k)
  CommHandle indices_, values_;
};

Status sparseAllReduce(Communicator& comm, const CompressedGrad& mine, std::span<float> sum,
                       const CommTrace& trace = {});

}  // namespace bubblescope::engine
