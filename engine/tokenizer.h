// ByteTokenizer: one token per byte (vocabulary 256), lossless both ways.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace bubblescope::engine {

class ByteTokenizer {
 public:
  static constexpr int32_t kVocabSize = 256;
  static std::vector<int32_t> encode(std::string_view text);
  static std::string decode(const std::vector<int32_t>& tokens);  // ids outside [0,256) -> '?'
};

// Reads a text file and tokenizes it. A missing, unreadable or empty file is
// an error that names the path.
Result<std::vector<int32_t>> loadTokenFile(const std::string& path);

}  // namespace bubblescope::engine
