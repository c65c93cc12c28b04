#include "storage/space_reserve.h"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

namespace bubblescope::storage {

SpaceReserve SpaceReserve::make(std::string path, int64_t bytes) {
  SpaceReserve r;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return r;
  const std::vector<char> zeros(64 * 1024, 0);
  bool ok = true;
  for (int64_t left = bytes; ok && left > 0;) {
    const auto n = static_cast<size_t>(std::min<int64_t>(left, static_cast<int64_t>(zeros.size())));
    ok = std::fwrite(zeros.data(), 1, n, f) == n;
    left -= static_cast<int64_t>(n);
  }
  ok = std::fflush(f) == 0 && ok;
  ok = std::fclose(f) == 0 && ok;
  if (!ok) {
    std::remove(path.c_str());
    return r;
  }
  r.path_ = std::move(path);
  return r;
}

SpaceReserve& SpaceReserve::operator=(SpaceReserve&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    other.path_.clear();
  }
  return *this;
}

void SpaceReserve::release() {
  if (path_.empty()) return;
  std::remove(path_.c_str());
  path_.clear();
}

}  // namespace bubblescope::storage
