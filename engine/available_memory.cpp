#include "engine/available_memory.h"

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

namespace bubblescope::engine {
namespace {

// "6.2 GiB", "512 MiB".
std::string humanBytes(double bytes) {
  char text[32];
  if (bytes >= 1024.0 * 1024 * 1024) {
    std::snprintf(text, sizeof text, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
  } else {
    std::snprintf(text, sizeof text, "%.1f MiB", bytes / (1024.0 * 1024));
  }
  return text;
}

// One number from a file such as memory.max ("max": none).
int64_t readNumber(const char* path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word == "max") return -1;
  try {
    return std::stoll(word);
  } catch (...) {
    return -1;
  }
}

}  // namespace

int64_t availableMemoryBytes() {
  int64_t available = -1;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") {
      available = kib * 1024;
      break;
    }
  }
  const int64_t limit = readNumber("/sys/fs/cgroup/memory.max");
  const int64_t used = readNumber("/sys/fs/cgroup/memory.current");
  if (limit > 0 && used >= 0) {
    const int64_t headroom = limit > used ? limit - used : 0;
    available = available < 0 ? headroom : std::min(available, headroom);
  }
  // An address-space limit (ulimit -v) bounds what this process may still
  // map: the limit less what it has mapped already (VmSize).
  struct rlimit as {};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    std::ifstream status("/proc/self/status");
    std::string field;
    int64_t mappedKib = -1;
    while (status >> field) {
      if (field == "VmSize:") {
        status >> mappedKib;
        break;
      }
    }
    if (mappedKib >= 0) {
      const auto limit = static_cast<int64_t>(as.rlim_cur);
      const int64_t headroom = std::max<int64_t>(0, limit - mappedKib * 1024);
      available = available < 0 ? headroom : std::min(available, headroom);
    }
  }
  return available;
}

Status checkFitsInMemory(std::string_view what, double bytes) {
  const int64_t available = availableMemoryBytes();
  if (available < 0 || bytes <= static_cast<double>(available)) return Status::ok();
  char exact[32];
  std::snprintf(exact, sizeof exact, "%.0f", bytes);
  return Status::invalidArgument(
      std::string(what) + " needs " + humanBytes(bytes) + " (" + exact + " bytes), more than the " +
      humanBytes(static_cast<double>(available)) + " available to this process");
}

Status checkFileFitsInMemory(std::string_view what, const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    return Status::notFound(std::string(what) + " does not exist");
  }
  if (!std::filesystem::is_regular_file(status)) {
    return Status::invalidArgument(std::string(what) + " is not a regular file");
  }
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return Status::ioError(std::string(what) + ": " + ec.message());
  return checkFitsInMemory(what, static_cast<double>(size));
}

}  // namespace bubblescope::engine
