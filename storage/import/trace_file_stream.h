// TraceFileStream: a std::istream over a trace file, plain or gzip
// (decompressed on the fly through zlib), read in fixed-size chunks, so a
// parser streams a file of any size in bounded memory.
//
// Contract: open() fails with one message when the file cannot be read, or
// when its first bytes show it is neither gzip nor JSON text (empty, a
// SQLite database, a broken gzip header, other bytes: "not a Kineto trace:
// …"). A gzip stream that is corrupt or ends early sets the stream's bad
// state; error() then says why ("truncated gzip data", zlib's message).
// bytesRead() counts the file's bytes consumed so far (compressed bytes for
// .gz), for progress against fileBytes(); textBytes() the JSON text decoded
// so far (equal to the bytes read for a plain file; up to one chunk, 256 KiB,
// ahead of what the parser has consumed). Not thread-safe.
#pragma once

#include <cstdint>
#include <istream>
#include <memory>
#include <string>

#include "common/result.h"

namespace bubblescope::import {

class TraceFileStream {
 public:
  static Result<std::unique_ptr<TraceFileStream>> open(const std::string& path);
  ~TraceFileStream();
  TraceFileStream(const TraceFileStream&) = delete;
  TraceFileStream& operator=(const TraceFileStream&) = delete;

  std::istream& stream();
  bool gzip() const;
  int64_t fileBytes() const;
  int64_t bytesRead() const;
  int64_t textBytes() const;
  // Empty while the data read so far is sound.
  const std::string& error() const;

 private:
  class Buffer;
  explicit TraceFileStream(std::unique_ptr<Buffer> buffer);
  std::unique_ptr<Buffer> buffer_;
  std::unique_ptr<std::istream> stream_;
};

}  // namespace bubblescope::import
