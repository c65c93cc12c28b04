// TopKCompressor: keeps the k = ceil(ratio n) elements of largest magnitude
// of grad + residual (ties: the lower index), as ascending indices and their
// values, with error feedback: the dropped elements stay in the residual,
// the kept ones leave it. ratio 1 keeps every element, so it decodes to the
// input exactly. bytes = 8 k (int32 index + fp32 value).
#pragma once

#include "engine/parallel/error_feedback.h"
#include "engine/parallel/grad_compressor.h"

namespace bubblescope::engine {

class TopKCompressor final : public GradCompressor {
 public:
  // ratio in (0, 1] (makeGradCompressor checks it).
  TopKCompressor(int64_t elements, double ratio);
  const char* name() const override { return "topk"; }
  int64_t keptElements() const { return k_; }
  Status compress(std::span<const float> grad, CompressedGrad& out) override;
  Status decompress(const CompressedGrad& in, std::span<float> out) const override;
  std::span<const float> residual() const override { return feedback_.residual(); }

 private:
  int64_t k_;
  ErrorFeedback feedback_;
  std::vector<int32_t> order_;  // (n) scratch
  std::vector<float> decoded_;  // (n) scratch
};

}  // namespace bubblescope::engine
