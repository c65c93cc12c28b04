#include "storage/analysis/json_text.h"

#include <cerrno>
#include <charconv>
#include <cstring>

namespace bubblescope::analysis {

JsonOut::JsonOut(std::FILE* file, std::string path) : file_(file), path_(std::move(path)) {
  buffer_.reserve(kBlock + 4096);
}

Status JsonOut::flush() {
  if (!buffer_.empty() && std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) {
    return Status::ioError("cannot write " + path_ + ": " + std::strerror(errno));
  }
  bytes_ += static_cast<int64_t>(buffer_.size());
  buffer_.clear();
  return Status::ok();
}

void appendEscaped(std::string& out, std::string_view s) {
  out += '"';
  bool plain = true;
  for (char c : s) plain &= c != '"' && c != '\\' && static_cast<unsigned char>(c) >= 0x20;
  if (plain) {
    out += s;
    out += '"';
    return;
  }
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char u[8];
          std::snprintf(u, sizeof u, "\\u%04x", c);
          out += u;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

void appendInt(std::string& out, int64_t v) {
  char text[24];
  const auto end = std::to_chars(text, text + sizeof text, v).ptr;
  out.append(text, end);
}

void appendMicros(std::string& out, int64_t ns) {
  const uint64_t mag = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  if (ns < 0) out += '-';
  char text[24];
  out.append(text, std::to_chars(text, text + sizeof text, mag / 1000).ptr);
  const unsigned frac = static_cast<unsigned>(mag % 1000);
  const char digits[4] = {'.', static_cast<char>('0' + frac / 100),
                          static_cast<char>('0' + frac / 10 % 10),
                          static_cast<char>('0' + frac % 10)};
  out.append(digits, 4);
}

}  // namespace bubblescope::analysis
