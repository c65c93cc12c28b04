// PowerSgdCompressor: rank-r PowerSGD (Vogels, Karimireddy, Jaggi 2019) of a
// matrix-shaped gradient with error feedback and a warm-started Q.
//
// One step on M = grad + residual, M (rows, cols) row-major:
//   P = M Q            (rows, r)   [all-reduced across ranks, when wired]
//   P = orthonormal columns of P (modified Gram-Schmidt, applied twice; a
//       column with no component left becomes zero)
//   Q = M^T P          (cols, r)   [all-reduced across ranks, when wired]
//   decoded = P Q^T, residual = M - decoded; Q is kept for the next step.
// The first Q is drawn from N(0, 1) with `seed` (every rank must use the same
// seed so their Q agree). On an exactly rank-r M (r independent columns of
// M Q) decoded = M up to fp32 rounding. bytes = 4 r (rows + cols).
// Dot products accumulate in double; stored values are fp32.
#pragma once

#include "engine/parallel/error_feedback.h"
#include "engine/parallel/grad_compressor.h"

namespace bubblescope::engine {

class PowerSgdCompressor final : public GradCompressor {
 public:
  // 1 <= rank <= min(rows, cols) (makeGradCompressor checks it).
  PowerSgdCompressor(int64_t rows, int64_t cols, int32_t rank, uint64_t seed = 0);
  const char* name() const override { return "powersgd"; }
  Status compress(std::span<const float> grad, CompressedGrad& out) override;
  Status decompress(const CompressedGrad& in, std::span<float> out) const override;
  std::span<const float> residual() const override { return feedback_.residual(); }
  std::span<const float> warmQ() const { return q_; }  // (cols, r)

 private:
  int64_t rows_;
  int64_t cols_;
  int32_t rank_;
  ErrorFeedback feedback_;
  std::vector<float> q_;        // (cols, r) the warm start
  std::vector<float> decoded_;  // (rows, cols) scratch
};

}  // namespace bubblescope::engine
