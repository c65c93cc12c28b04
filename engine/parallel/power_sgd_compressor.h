// PowerSgdCompressor: rank-r PowerSGD (Vogels, Karimireddy, Jaggi 2019) of a
// matrix-shaped gradient with error feedback and a warm-started Q.
//
// One step on M = grad + residual, M (rows, cols) row-major:
//   P = M Q            (rows, r)   [all-reduced across the ranks]
//   P = orthonormal columns of P (modified Gram-Schmidt, applied twice; a
//       column with no component left becomes zero)
//   Q = M^T P          (cols, r)   [all-reduced across the ranks]
//   decoded = P Q^T, residual = M - decoded / N; Q is kept for the next step.
// Over N ranks (power_sgd_reduction.h) the three phases project(),
// backProject() and finish() run around the two all-reduces: decoded then
// approximates the sum of the N ranks' M, and each rank keeps M minus its
// N-th of it (so the residuals sum to the total error, as in PyTorch's
// powerSGD_hook). compress() runs the phases with N = 1 and no reduction.
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

  // Phase 1: M = grad + residual (kept until finish()); p (rows, r) = M Q.
  Status project(std::span<const float> grad, std::span<float> p);
  // Phase 2: orthonormalises p (the group's sum) in place; q (cols, r) = M^T p.
  void backProject(std::span<float> p, std::span<float> q) const;
  // Phase 3: decoded (rows, cols) = p q^T (q: the group's sum); residual =
  // M - decoded / ranks; q is the next step's warm start.
  void finish(std::span<const float> p, std::span<const float> q, int32_t ranks,
              std::span<float> decoded);
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int32_t rank() const { return rank_; }

 private:
  int64_t rows_;
  int64_t cols_;
  int32_t rank_;
  ErrorFeedback feedback_;
  std::vector<float> q_;        // (cols, r) the warm start
  std::span<const float> m_;    // phase 1 to 3: grad + residual (the feedback's buffer)
  std::vector<float> decoded_;  // (rows, cols) scratch
};

}  // namespace bubblescope::engine
