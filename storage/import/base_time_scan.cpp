#include "storage/import/base_time_scan.h"

#include <fstream>
#include <vector>

#include "storage/import/trace_file_stream.h"

namespace bubblescope::import {
namespace {

constexpr size_t kChunkBytes = 256 << 10;

// The last kBaseTimeTailBytes of the stream's text.
std::string tailOf(std::istream& in) {
  std::string tail;
  std::vector<char> chunk(kChunkBytes);
  const auto keep = static_cast<size_t>(kBaseTimeTailBytes);
  while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0) {
    tail.append(chunk.data(), static_cast<size_t>(in.gcount()));
    if (tail.size() > 2 * keep) tail.erase(0, tail.size() - keep);
  }
  if (tail.size() > keep) tail.erase(0, tail.size() - keep);
  return tail;
}

}  // namespace

std::optional<int64_t> findBaseTimeNs(const std::string& text) {
  static const std::string kKey = "\"baseTimeNanoseconds\"";
  for (size_t at = text.rfind(kKey); at != std::string::npos;
       at = at == 0 ? std::string::npos : text.rfind(kKey, at - 1)) {
    size_t i = at + kKey.size();
    while (i < text.size() &&
           (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) {
      ++i;
    }
    if (i >= text.size() || text[i] != ':') continue;
    ++i;
    while (i < text.size() &&
           (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) {
      ++i;
    }
    int64_t value = 0;
    size_t digits = 0;
    bool overflow = false;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++digits) {
      overflow = overflow || __builtin_mul_overflow(value, 10, &value) ||
                 __builtin_add_overflow(value, text[i] - '0', &value);
    }
    const bool ends = i < text.size() && (text[i] == ',' || text[i] == '}' || text[i] == ' ' ||
                                          text[i] == '\n' || text[i] == '\r');
    if (digits > 0 && ends && !overflow) return value;
  }
  return std::nullopt;
}

std::optional<int64_t> scanBaseTimeNs(const std::string& path) {
  auto stream = TraceFileStream::open(path);
  if (!stream.isOk()) return std::nullopt;
  if ((*stream)->gzip()) return findBaseTimeNs(tailOf((*stream)->stream()));
  std::ifstream plain(path, std::ios::binary);
  const int64_t size = (*stream)->fileBytes();
  if (size > kBaseTimeTailBytes) plain.seekg(size - kBaseTimeTailBytes);
  return findBaseTimeNs(tailOf(plain));
}

}  // namespace bubblescope::import
