#include "cli/heartbeat.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include <unistd.h>

namespace bubblescope::cli {
namespace {

constexpr const char* kPrefix = "bubblescope-heartbeat ";
std::atomic<int64_t> gStepDone{-1};

}  // namespace

void noteStepDone(int64_t step) {
  gStepDone.store(step, std::memory_order_relaxed);
}

void startHeartbeat(int rank) {
  std::thread([rank] {
    char line[128];
    while (true) {
      const int n =
          std::snprintf(line, sizeof line, "%srank=%d step=%lld\n", kPrefix, rank,
                        static_cast<long long>(gStepDone.load(std::memory_order_relaxed)));
      // One write of the whole line (not stdio: another thread's partial
      // stderr output must not surround it); a failed write is a missed beat.
      if (n > 0 && n < static_cast<int>(sizeof line)) {
        [[maybe_unused]] const ssize_t written = ::write(STDERR_FILENO, line, static_cast<size_t>(n));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(kHeartbeatMs));
    }
  }).detach();
}

std::optional<HeartbeatLine> parseHeartbeat(const std::string& line) {
  if (line.rfind(kPrefix, 0) != 0) return std::nullopt;
  HeartbeatLine h;
  long long step = 0;
  if (std::sscanf(line.c_str() + std::strlen(kPrefix), "rank=%d step=%lld", &h.rank, &step) != 2) {
    return std::nullopt;
  }
  h.step = step;
  return h;
}

}  // namespace bubblescope::cli
