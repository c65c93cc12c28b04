// Writing JSON text fast, for the trace exports (Chrome, Kineto): a buffer
// written to a file in large blocks, and appenders for strings, integers and
// nanoseconds as microseconds.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "common/result.h"

namespace bubblescope::analysis {

// Appends JSON text to a buffer and writes it out in large blocks.
// Contract: does not own `file`; flush() before closing it.
class JsonOut {
 public:
  JsonOut(std::FILE* file, std::string path);
  std::string& text() { return buffer_; }
  Status maybeFlush() { return buffer_.size() >= kBlock ? flush() : Status::ok(); }
  Status flush();
  int64_t bytes() const { return bytes_; }

 private:
  static constexpr size_t kBlock = 1 << 20;
  std::FILE* file_;
  std::string path_;
  std::string buffer_;
  int64_t bytes_ = 0;
};

// `s` as a quoted JSON string.
void appendEscaped(std::string& out, std::string_view s);
void appendInt(std::string& out, int64_t v);
// ns as µs with exactly three decimals ("-1.500"), no rounding.
void appendMicros(std::string& out, int64_t ns);

}  // namespace bubblescope::analysis
