// The sums of the element types a compressed reduction sends (issue 19),
// defined once for every backend (MpiCommunicator's user-defined MPI ops
// call these).
//
// - kFloat16 / kBFloat16: each pair is widened to fp32, added, and rounded
//   back to nearest even: the arithmetic is fp32, the partial sums that
//   travel between ranks are 16-bit (NCCL does the same).
// - kInt8Block: two blocks are decoded (code x scale), added in fp32 and
//   quantised again (quantizeInt8Chunk: scale = max |sum| / 127); each
//   combination adds at most half the new scale of error per element.
// Every sum is commutative bit for bit (fp32 addition and max are), so every
// rank of an all-reduce ends with the same bits whatever the algorithm's
// order of operands.
#pragma once

#include <cstdint>
#include <span>

namespace bubblescope::engine {

inline constexpr int64_t kInt8BlockElements = 1024;  // Int8Compressor's default chunk

// One chunk of int8 codes and its scale: value i = codes[i] * scale.
struct Int8Block {
  float scale = 0.0f;
  int8_t codes[kInt8BlockElements] = {};
};
static_assert(sizeof(Int8Block) == 4 + kInt8BlockElements);

// inout[i] = in[i] + inout[i], for n elements of each type.
void addHalves(const uint16_t* in, uint16_t* inout, int64_t n);
void addBf16s(const uint16_t* in, uint16_t* inout, int64_t n);
void addInt8Blocks(const Int8Block* in, Int8Block* inout, int64_t n);

// Quantises v (any length; a block holds kInt8BlockElements) into `codes`: scale =
// max |v| / 127, code = round(v / scale) in [-127, 127]; returns the scale
// (0 for an all-zero chunk, codes 0).
float quantizeInt8Chunk(std::span<const float> v, int8_t* codes);

}  // namespace bubblescope::engine
