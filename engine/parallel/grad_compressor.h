// GradCompressor: what a data-parallel gradient bucket would send instead of
// its fp32 values (issue 19). Pure host code; nothing here communicates.
//
// Contract:
// - One compressor serves one bucket (fixed element count, and for PowerSGD
//   a fixed matrix shape) on one thread: compressors with error feedback keep
//   the bucket's residual between steps.
// - compress(grad, out) encodes `grad` (n elements) into `out`; with error
//   feedback it encodes grad + residual and keeps residual = (grad +
//   residual) - decompress(out), so over steps nothing is lost:
//   sum of decompressed + final residual = sum of inputs (up to fp32 rounding).
// - decompress(in, out) writes the n decoded values. It reads only `in`.
// - CompressedGrad::bytes() is what a rank would send for the bucket.
// - A non-finite input value is an error for the compressors with error
//   feedback (it would poison the residual); the residual is then unchanged.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "engine/layout/grad_comm.h"

namespace bubblescope::engine {

// One bucket encoded. Only the fields of the compressor that wrote it are used.
struct CompressedGrad {
  int64_t elements = 0;          // n, the decoded length
  std::vector<uint16_t> halves;  // fp16 / bf16: (n) bit patterns
  std::vector<int8_t> codes;     // int8: (n)
  std::vector<float> scales;     // int8: (ceil(n / chunk)) one per chunk
  std::vector<int32_t> indices;  // topk: (k) ascending
  std::vector<float> values;     // none: (n); topk: (k); powersgd: P (rows, r) then Q (cols, r)

  int64_t bytes() const;  // the bytes sent: every field's payload
};

// The spec (engine/layout/grad_comm.h), named here as the compressors' tests
// and callers know it.
using layout::GradCompression;
using layout::GradCompressionSpec;
using layout::parseGradCompression;

class GradCompressor {
 public:
  virtual ~GradCompressor() = default;
  virtual const char* name() const = 0;
  virtual Status compress(std::span<const float> grad, CompressedGrad& out) = 0;
  virtual Status decompress(const CompressedGrad& in, std::span<float> out) const = 0;
  // The error-feedback residual (n elements; empty: no error feedback).
  virtual std::span<const float> residual() const { return {}; }
};

// The shape of the bucket a compressor serves: n elements; PowerSGD needs
// rows x cols = n (a matrix-shaped gradient).
struct GradShape {
  int64_t elements = 0;
  int64_t rows = 0;
  int64_t cols = 0;
};
Result<std::unique_ptr<GradCompressor>> makeGradCompressor(const GradCompressionSpec& spec,
                                                           const GradShape& shape);

// fp32 sent as is: the reference (bytes = 4 n, decompress = copy).
class NoCompressor final : public GradCompressor {
 public:
  const char* name() const override { return "none"; }
  Status compress(std::span<const float> grad, CompressedGrad& out) override;
  Status decompress(const CompressedGrad& in, std::span<float> out) const override;
};

// Checks that `out` has the `in.elements` a decompress writes.
Status checkDecodedSize(const CompressedGrad& in, std::span<float> out, const char* who);

}  // namespace bubblescope::engine
