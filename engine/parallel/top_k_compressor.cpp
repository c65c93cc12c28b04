#include "engine/parallel/top_k_compressor.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace bubblescope::engine {

TopKCompressor::TopKCompressor(int64_t elements, double ratio)
    : k_(std::clamp<int64_t>(static_cast<int64_t>(std::ceil(ratio * static_cast<double>(elements))),
                             elements > 0 ? 1 : 0, elements)),
      feedback_(elements) {}

Status TopKCompressor::compress(std::span<const float> grad, CompressedGrad& out) {
  BS_ASSIGN_OR_RETURN(std::span<const float> v, feedback_.corrected(grad, name()));
  order_.resize(v.size());
  std::iota(order_.begin(), order_.end(), 0);
  const auto larger = [&](int32_t a, int32_t b) {
    const float ma = std::fabs(v[a]), mb = std::fabs(v[b]);
    return ma > mb || (ma == mb && a < b);
  };
  std::nth_element(order_.begin(), order_.begin() + k_, order_.end(), larger);
  out = CompressedGrad{};
  out.elements = static_cast<int64_t>(v.size());
  out.indices.assign(order_.begin(), order_.begin() + k_);
  std::sort(out.indices.begin(), out.indices.end());
  out.values.reserve(out.indices.size());
  for (int32_t i : out.indices) out.values.push_back(v[i]);
  decoded_.resize(v.size());
  if (Status s = decompress(out, decoded_); !s.isOk()) return s;
  feedback_.keep(decoded_);
  return Status::ok();
}

Status TopKCompressor::decompress(const CompressedGrad& in, std::span<float> out) const {
  if (Status s = checkDecodedSize(in, out, name()); !s.isOk()) return s;
  if (in.indices.size() != in.values.size()) {
    return Status::invalidArgument("topk: " + std::to_string(in.indices.size()) + " indices but " +
                                   std::to_string(in.values.size()) + " values");
  }
  std::fill(out.begin(), out.end(), 0.0f);
  for (size_t j = 0; j < in.indices.size(); ++j) {
    const int32_t i = in.indices[j];
    if (i < 0 || i >= in.elements) {
      return Status::invalidArgument("topk: index " + std::to_string(i) + " outside the " +
                                     std::to_string(in.elements) + " elements");
    }
    out[i] = in.values[j];
  }
  return Status::ok();
}

}  // namespace bubblescope::engine
