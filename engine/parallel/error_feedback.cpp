#include "engine/parallel/error_feedback.h"

#include <cmath>
#include <string>

namespace bubblescope::engine {

Result<std::span<const float>> ErrorFeedback::corrected(std::span<const float> grad,
                                                        const char* who) {
  if (grad.size() != residual_.size()) {
    return Status::invalidArgument(std::string(who) + ": gradient has " +
                                   std::to_string(grad.size()) + " elements, the bucket " +
                                   std::to_string(residual_.size()));
  }
  for (size_t i = 0; i < grad.size(); ++i) {
    if (!std::isfinite(grad[i])) {
      return Status::invalidArgument(std::string(who) + ": gradient element " + std::to_string(i) +
                                     " is not finite (" + std::to_string(grad[i]) + ")");
    }
  }
  corrected_.resize(grad.size());
  for (size_t i = 0; i < grad.size(); ++i) corrected_[i] = grad[i] + residual_[i];
  return std::span<const float>(corrected_);
}

void ErrorFeedback::keep(std::span<const float> decoded) {
  for (size_t i = 0; i < residual_.size(); ++i) residual_[i] = corrected_[i] - decoded[i];
}

}  // namespace bubblescope::engine
