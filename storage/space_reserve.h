// SpaceReserve: disk space held back for a trace file's last write. A run
// whose disk fills up must still be marked failed with the reason (the
// launcher's UPDATE of the run row needs a few WAL pages), and under load
// the collector's last failed batch sometimes left none: the run then read
// "interrupted", without its reason.
//
// Contract:
// - make(path, bytes) writes `bytes` zero bytes to `path` (a file there is
//   replaced). When the disk cannot hold them the reserve is empty (held()
//   false) and nothing is left at `path`: there is no space to hold back.
// - release() deletes the file, handing its space back; it is idempotent,
//   and the destructor releases. Move-only; not thread-safe.
#pragma once

#include <cstdint>
#include <string>

namespace bubblescope::storage {

class SpaceReserve {
 public:
  SpaceReserve() = default;
  static SpaceReserve make(std::string path, int64_t bytes);
  ~SpaceReserve() { release(); }
  SpaceReserve(SpaceReserve&& other) noexcept : path_(std::move(other.path_)) {
    other.path_.clear();
  }
  SpaceReserve& operator=(SpaceReserve&& other) noexcept;
  SpaceReserve(const SpaceReserve&) = delete;
  SpaceReserve& operator=(const SpaceReserve&) = delete;

  bool held() const { return !path_.empty(); }
  const std::string& path() const { return path_; }
  void release();

 private:
  std::string path_;  // "" when nothing is held
};

}  // namespace bubblescope::storage
