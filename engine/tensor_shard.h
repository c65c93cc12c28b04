// TensorShard: which slice of a full-shape tensor one tensor-parallel rank
// holds (Megatron-LM's column- and row-parallel layers), and the copies
// between the full tensor and the slice.
//
// The split dimension `dim` of extent E is seen as `parts` equal blocks of
// E / parts (the Q, K and V rows of a fused QKV projection: parts = 3); rank r
// of `size` holds piece r of every block, E / (parts · size) elements each,
// the blocks' pieces concatenated in block order. So rank r's slice of a QKV
// weight (3C, C) is [q_r; k_r; v_r] (3C / size, C): the Q, K and V rows of its
// heads. dim = -1 (or size 1) means replicated: the whole tensor.
//
// Contract: pure index arithmetic on row-major tensors; E must be divisible
// by parts · size (the model checks tp divides heads and the MLP width).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace bubblescope::engine {

struct TensorShard {
  int32_t dim = -1;   // split dimension; -1: replicated
  int32_t parts = 1;  // equal blocks of the split dimension, each split over the ranks
  int32_t rank = 0;   // tp rank
  int32_t size = 1;   // tp size

  bool sharded() const { return dim >= 0 && size > 1; }
};

// The slice's shape: `full` with the split dimension divided by size.
inline std::vector<int64_t> shardShape(std::vector<int64_t> full, const TensorShard& s) {
  if (s.sharded()) full[static_cast<size_t>(s.dim)] /= s.size;
  return full;
}

// Calls f(fullIndex, localIndex) for every element of the slice, in local order.
template <class F>
void forEachShardElement(const std::vector<int64_t>& full, const TensorShard& s, F&& f) {
  int64_t outer = 1, extent = 1, inner = 1;
  for (size_t d = 0; d < full.size(); ++d) {
    const int64_t n = full[d];
    if (!s.sharded() || static_cast<int32_t>(d) < s.dim) {
      outer *= n;
    } else if (static_cast<int32_t>(d) == s.dim) {
      extent = n;
    } else {
      inner *= n;
    }
  }
  // Unsharded: the whole tensor, whatever `parts` says (a QKV weight at tp 1).
  const int64_t size = s.sharded() ? s.size : 1, rank = s.sharded() ? s.rank : 0;
  const int64_t parts = s.sharded() ? s.parts : 1;
  const int64_t block = extent / parts;  // one part of the full extent
  const int64_t piece = block / size;    // this rank's share of one part
  const int64_t localExtent = extent / size;
  int64_t local = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < localExtent; ++j) {
      const int64_t fullJ = (j / piece) * block + rank * piece + j % piece;
      const int64_t base = (o * extent + fullJ) * inner;
      for (int64_t i = 0; i < inner; ++i) f(base + i, local++);
    }
  }
}

// local = this rank's slice of `full` (both row-major).
template <class S>
void copyShardFromFull(const S* full, const std::vector<int64_t>& fullShape, const TensorShard& s,
                       S* local) {
  forEachShardElement(fullShape, s, [&](int64_t f, int64_t l) { local[l] = full[f]; });
}

// Writes this rank's slice `local` into its place in `full`.
template <class S>
void copyShardIntoFull(const S* local, const std::vector<int64_t>& fullShape, const TensorShard& s,
                       S* full) {
  forEachShardElement(fullShape, s, [&](int64_t f, int64_t l) { full[f] = local[l]; });
}

}  // namespace bubblescope::engine
