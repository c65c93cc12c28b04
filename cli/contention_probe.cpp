#include "cli/contention_probe.h"

#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "common/value_range.h"
#include "planning/contention.h"

namespace bubblescope::cli {
namespace {

// -1 when the clock cannot be read.
int64_t clockNs(clockid_t clock) {
  timespec t{};
  if (clock_gettime(clock, &t) != 0) return -1;
  return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// Spins until `wallNs` of wall time passed since `startNs`; its CPU time
// over the wall time it spun, or -1.
double spinShare(int64_t startNs, int64_t wallNs) {
  const int64_t cpu0 = clockNs(CLOCK_THREAD_CPUTIME_ID);
  int64_t now = clockNs(CLOCK_MONOTONIC);
  volatile uint64_t work = 0;
  while (now >= 0 && now - startNs < wallNs) {
    for (int i = 0; i < 1000; ++i) work = work + static_cast<uint64_t>(i);
    now = clockNs(CLOCK_MONOTONIC);
  }
  const int64_t cpu1 = clockNs(CLOCK_THREAD_CPUTIME_ID);
  if (now < 0 || cpu0 < 0 || cpu1 < 0 || now <= startNs) return -1.0;
  return static_cast<double>(cpu1 - cpu0) / static_cast<double>(now - startNs);
}

}  // namespace

Result<BackgroundLoad> measureBackground(int64_t wallNs) {
  if (wallNs < 1'000'000 || wallNs > 10'000'000'000) {
    return Status::invalidArgument("background probe: wall time " + std::to_string(wallNs) +
                                   " ns outside 1 ms .. 10 s");
  }
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  BackgroundLoad load;
  load.cores = static_cast<int32_t>(online > 0 ? online : 1);
  std::vector<double> shares(static_cast<size_t>(load.cores), -1.0);
  std::vector<std::thread> threads;
  const int64_t start = clockNs(CLOCK_MONOTONIC);
  if (start < 0) return Status::internal("background probe: the monotonic clock cannot be read");
  try {
    for (int32_t i = 0; i < load.cores; ++i) {
      threads.emplace_back([&shares, i, start, wallNs] { shares[i] = spinShare(start, wallNs); });
    }
  } catch (const std::system_error& e) {
    for (std::thread& t : threads) t.join();
    return Status::internal(std::string("background probe: cannot start a thread: ") + e.what());
  }
  for (std::thread& t : threads) t.join();
  double sum = 0;
  for (double s : shares) {
    if (!(s > 0)) return Status::internal("background probe: a thread's CPU clock cannot be read");
    sum += s;
  }
  load.share = sum / load.cores;
  load.background = layout::backgroundFromShare(load.share, load.cores, load.cores);
  return load;
}

Result<double> backgroundOption(const std::string& text) {
  if (text == "measure") {
    BS_ASSIGN_OR_RETURN(const BackgroundLoad load, measureBackground());
    std::fprintf(stderr,
                 "background: %.2f busy threads of other work (measured: %d threads got %.3f "
                 "of a core each)\n",
                 load.background, load.cores, load.share);
    return load.background;
  }
  auto b = parseInRange<double>("--background", text, 0.0, 1e6);
  if (!b.isOk()) {
    return Status::invalidArgument("--background: expected 'measure' or a number of busy "
                                   "threads from 0 to 1e6, got '" + text + "'");
  }
  return *b;
}

}  // namespace bubblescope::cli
