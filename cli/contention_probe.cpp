#include "cli/contention_probe.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "common/value_range.h"
#include "planning/contention.h"
#include "tracer/clock.h"

namespace bubblescope::cli {
namespace {

// Spins until `wallNs` of wall time passed since `startNs` (monotonic);
// its CPU time over the wall time it spun.
double spinShare(int64_t startNs, int64_t wallNs) {
  const int64_t cpu0 = tracer::threadCpuNowNs();
  int64_t now = tracer::monotonicNowNs();
  volatile uint64_t work = 0;
  while (now - startNs < wallNs) {
    for (int i = 0; i < 1000; ++i) work = work + static_cast<uint64_t>(i);
    now = tracer::monotonicNowNs();
  }
  return static_cast<double>(tracer::threadCpuNowNs() - cpu0) /
         static_cast<double>(now - startNs);
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
  const int64_t start = tracer::monotonicNowNs();
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
    if (!(s > 0)) return Status::internal("background probe: a thread got no CPU time");
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
