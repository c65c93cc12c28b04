#include "storage/import/trace_file_stream.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <streambuf>
#include <vector>

namespace bubblescope::import {

// A read-only streambuf: refills from the file, inflating gzip members.
class TraceFileStream::Buffer final : public std::streambuf {
 public:
  static constexpr size_t kChunkBytes = 1 << 18;

  Buffer(std::FILE* file, bool gzip, int64_t fileBytes)
      : file_(file), gzip_(gzip), fileBytes_(fileBytes), in_(kChunkBytes), out_(kChunkBytes) {
    if (gzip_) {
      std::memset(&z_, 0, sizeof(z_));
      // 15 + 32: a zlib or gzip header, detected.
      if (inflateInit2(&z_, 15 + 32) != Z_OK) error_ = "zlib could not start inflating";
      zOpen_ = true;
    }
  }
  ~Buffer() override {
    if (zOpen_) inflateEnd(&z_);
    std::fclose(file_);
  }

  bool gzip() const { return gzip_; }
  int64_t fileBytes() const { return fileBytes_; }
  int64_t bytesRead() const { return bytesRead_; }
  // The text handed to the reader so far, plus what waits in the buffer.
  int64_t textBytes() const { return textBytes_; }
  const std::string& error() const { return error_; }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    if (!error_.empty()) return traits_type::eof();
    const size_t n = gzip_ ? inflateSome() : readSome(out_.data(), out_.size());
    if (n == 0) return traits_type::eof();
    textBytes_ += static_cast<int64_t>(n);
    setg(out_.data(), out_.data(), out_.data() + n);
    return traits_type::to_int_type(*gptr());
  }

 private:
  size_t readSome(char* into, size_t capacity) {
    const size_t n = std::fread(into, 1, capacity, file_);
    bytesRead_ += static_cast<int64_t>(n);
    if (n == 0 && std::ferror(file_)) error_ = std::string("read failed: ") + std::strerror(errno);
    return n;
  }

  // Inflates into out_ until some bytes come out or the input ends. Only the
  // end of the file ends a gzip file: another member may follow a member.
  size_t inflateSome() {
    for (;;) {
      if (z_.avail_in == 0) {
        const size_t n = readSome(in_.data(), in_.size());
        if (n == 0) {
          if (error_.empty() && !streamEnded_) error_ = "truncated gzip data (the file ends early)";
          return 0;
        }
        z_.next_in = reinterpret_cast<Bytef*>(in_.data());
        z_.avail_in = static_cast<uInt>(n);
      }
      if (streamEnded_) {
        if (inflateReset(&z_) != Z_OK) {
          error_ = "zlib could not restart";
          return 0;
        }
        streamEnded_ = false;
      }
      z_.next_out = reinterpret_cast<Bytef*>(out_.data());
      z_.avail_out = static_cast<uInt>(out_.size());
      const int rc = inflate(&z_, Z_NO_FLUSH);
      const size_t produced = out_.size() - z_.avail_out;
      if (rc == Z_STREAM_END) {
        streamEnded_ = true;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        error_ = std::string("corrupt gzip data (") + (z_.msg ? z_.msg : "zlib error") + ")";
        return produced;
      }
      if (produced > 0) return produced;
    }
  }

  std::FILE* file_;
  bool gzip_;
  int64_t fileBytes_;
  int64_t bytesRead_ = 0;
  int64_t textBytes_ = 0;
  std::vector<char> in_, out_;
  z_stream z_{};
  bool zOpen_ = false;
  bool streamEnded_ = false;
  std::string error_;
};

namespace {

// "1f 00 41 …": the first bytes, for a message.
std::string hexBytes(const unsigned char* bytes, size_t n) {
  std::string out;
  char hex[4];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(hex, sizeof hex, "%02x", bytes[i]);
    if (i > 0) out += ' ';
    out += hex;
  }
  return out;
}

// Why a file that is not gzip cannot be JSON text, from its first bytes;
// empty when it may be (a '{' or '[' after blanks or a UTF-8 byte order mark).
std::string notJsonOrGzip(const unsigned char* head, size_t n) {
  if (n == 0) return "the file is empty";
  static const char kSqlite[] = "SQLite format 3";
  if (n >= sizeof kSqlite && std::memcmp(head, kSqlite, sizeof kSqlite) == 0) {
    return "a SQLite database, not a Kineto JSON trace";
  }
  size_t i = n >= 3 && head[0] == 0xef && head[1] == 0xbb && head[2] == 0xbf ? 3 : 0;
  while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' || head[i] == '\r')) ++i;
  if (i == n || head[i] == '{' || head[i] == '[') return "";
  const std::string bytes = hexBytes(head, std::min<size_t>(n, 8));
  if (head[0] == 0x1f) {
    return "a broken gzip header: the file begins " + bytes + ", gzip data begins 1f 8b";
  }
  return "neither JSON nor gzip: the file begins " + bytes +
         " (a Kineto trace is JSON text, or gzip beginning 1f 8b)";
}

}  // namespace

Result<std::unique_ptr<TraceFileStream>> TraceFileStream::open(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    return Status::notFound("cannot open " + path + ": " + std::strerror(errno));
  }
  unsigned char head[64] = {};
  const size_t got = std::fread(head, 1, sizeof head, file);
  const bool gzip = got >= 2 && head[0] == 0x1f && head[1] == 0x8b;
  if (!gzip) {
    if (const std::string why = notJsonOrGzip(head, got); !why.empty()) {
      std::fclose(file);
      return Status::unsupported("not a Kineto trace: " + why);
    }
  }
  std::fseek(file, 0, SEEK_END);
  const int64_t size = std::ftell(file);
  std::fseek(file, 0, SEEK_SET);
  return std::unique_ptr<TraceFileStream>(
      new TraceFileStream(std::make_unique<Buffer>(file, gzip, size)));
}

TraceFileStream::TraceFileStream(std::unique_ptr<Buffer> buffer)
    : buffer_(std::move(buffer)), stream_(std::make_unique<std::istream>(buffer_.get())) {}
TraceFileStream::~TraceFileStream() = default;

std::istream& TraceFileStream::stream() {
  return *stream_;
}
bool TraceFileStream::gzip() const {
  return buffer_->gzip();
}
int64_t TraceFileStream::fileBytes() const {
  return buffer_->fileBytes();
}
int64_t TraceFileStream::bytesRead() const {
  return buffer_->bytesRead();
}
int64_t TraceFileStream::textBytes() const {
  return buffer_->textBytes();
}
const std::string& TraceFileStream::error() const {
  return buffer_->error();
}

}  // namespace bubblescope::import
