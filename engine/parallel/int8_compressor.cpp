#include "engine/parallel/int8_compressor.h"

#include <algorithm>
#include <string>

#include "engine/parallel/reduced_types.h"

namespace bubblescope::engine {

Status Int8Compressor::compress(std::span<const float> grad, CompressedGrad& out) {
  BS_ASSIGN_OR_RETURN(std::span<const float> v, feedback_.corrected(grad, name()));
  const auto n = static_cast<int64_t>(v.size());
  out = CompressedGrad{};
  out.elements = n;
  out.codes.resize(v.size());
  for (int64_t begin = 0; begin < n; begin += chunkElements_) {
    const int64_t end = std::min(n, begin + chunkElements_);
    out.scales.push_back(quantizeInt8Chunk(v.subspan(begin, end - begin), &out.codes[begin]));
  }
  decoded_.resize(v.size());
  if (Status s = decompress(out, decoded_); !s.isOk()) return s;
  feedback_.keep(decoded_);
  return Status::ok();
}

Status Int8Compressor::decompress(const CompressedGrad& in, std::span<float> out) const {
  if (Status s = checkDecodedSize(in, out, name()); !s.isOk()) return s;
  const auto chunks = (in.elements + chunkElements_ - 1) / chunkElements_;
  if (static_cast<int64_t>(in.codes.size()) != in.elements ||
      static_cast<int64_t>(in.scales.size()) != chunks) {
    return Status::invalidArgument("int8: " + std::to_string(in.codes.size()) + " codes and " +
                                   std::to_string(in.scales.size()) + " scales for " +
                                   std::to_string(in.elements) + " elements in chunks of " +
                                   std::to_string(chunkElements_));
  }
  for (int64_t i = 0; i < in.elements; ++i) {
    out[i] = static_cast<float>(in.codes[i]) * in.scales[i / chunkElements_];
  }
  return Status::ok();
}

}  // namespace bubblescope::engine
