// PowerSgdReduction: a gradient bucket all-reduced with rank-r PowerSGD
// (Vogels, Karimireddy, Jaggi 2019, Algorithm 1) on its matrix-shaped
// gradients, the rest uncompressed (bucket_reduction.h).
//
// A matrix (rows, cols) is factorised when r <= min(rows, cols) and
// r (rows + cols) < rows cols (it then sends fewer values); other matrices,
// vectors and matrices cut by a bucket boundary travel as fp32. Per step:
//   start():  M_j = grad_j + residual_j; P_j = M_j Q_j for every factorised
//             matrix; one non-blocking all-reduce of [P_1 .. P_k | the rest]
//             (named grad_all_reduce.powersgd_p), so it overlaps backward.
//   finish(): orthonormalise each P_j; Q_j = M_j^T P_j; one blocking
//             all-reduce of [Q_1 .. Q_k] (grad_all_reduce.powersgd_q);
//             sum_j = P_j Q_j^T; residual_j = M_j - sum_j / N; Q_j is the
//             next step's warm start. The rest is copied from the first
//             all-reduce.
// Every rank computes the same P (orthonormalised from the same sum) and Q,
// so every replica applies the same gradient. The first Q_j is drawn from
// N(0, 1) with seed j, equal on every rank.
#pragma once

#include <memory>
#include <vector>

#include "engine/parallel/bucket_reduction.h"
#include "engine/parallel/power_sgd_compressor.h"

namespace bubblescope::engine {

class PowerSgdReduction final : public BucketReduction {
 public:
  // `matrices` in ascending offset order, not overlapping, inside [0, elements).
  PowerSgdReduction(Communicator& comm, int64_t elements, std::vector<GradMatrix> matrices,
                    int32_t rank);
  Status start(std::span<const float> grads, const CommTrace& trace) override;
  Status finish(std::span<float> sum) override;
  int32_t factorisedMatrices() const { return static_cast<int32_t>(factors_.size()); }

 private:
  struct Factor {
    GradMatrix matrix;
    std::unique_ptr<PowerSgdCompressor> compressor;
    int64_t pOffset = 0;  // in first_
    int64_t qOffset = 0;  // in second_
  };
  struct Piece {  // an uncompressed range of the bucket and where it sits in first_
    int64_t offset = 0, size = 0, at = 0;
  };

  Communicator& comm_;
  int64_t elements_;
  std::vector<Factor> factors_;
  std::vector<Piece> rest_;
  std::vector<float> first_;   // [P_1 .. P_k | rest]
  std::vector<float> second_;  // [Q_1 .. Q_k]
  CommHandle handle_;
  CommTrace trace_;
};

}  // namespace bubblescope::engine
