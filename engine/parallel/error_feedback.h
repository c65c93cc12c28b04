// ErrorFeedback: the residual a lossy compressor carries to the next step
// (Seide et al. 2014; Karimireddy et al. 2019). Used by Int8Compressor,
// TopKCompressor and PowerSgdCompressor.
//
// Contract: corrected(grad) returns grad + residual (n elements, the residual
// starts at zero; a different n is an error). After encoding it, the owner
// calls keep(decoded): residual = corrected - decoded. A non-finite input is
// an error and changes nothing.
#pragma once

#include <span>
#include <vector>

#include "common/result.h"

namespace bubblescope::engine {

class ErrorFeedback {
 public:
  explicit ErrorFeedback(int64_t elements) : residual_(elements, 0.0f) {}

  // grad + residual, valid until the next call. `who` names the compressor in errors.
  Result<std::span<const float>> corrected(std::span<const float> grad, const char* who);
  // residual = corrected - decoded; decoded has n elements.
  void keep(std::span<const float> decoded);
  std::span<const float> residual() const { return residual_; }

 private:
  std::vector<float> residual_;   // (n)
  std::vector<float> corrected_;  // (n)
};

}  // namespace bubblescope::engine
