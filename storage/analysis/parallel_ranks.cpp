#include "storage/analysis/parallel_ranks.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace bubblescope::analysis {
namespace {

// What the threads share, under `mutex`.
struct Progress {
  std::mutex mutex;
  std::condition_variable changed;
  std::atomic<int64_t> next{0};
  int64_t finished = 0;
  int helpersRunning = 0;
  bool stop = false;
  Status firstError;
};

// Takes items until none is left or the work stops.
void takeItems(storage::TraceReader& reader, int64_t count, const RankWork& work, Progress& p,
               const std::function<bool()>& afterEach) {
  while (true) {
    {
      std::lock_guard lock(p.mutex);
      if (p.stop) return;
    }
    const int64_t i = p.next++;
    if (i >= count) return;
    Status s = work(reader, i);
    {
      std::lock_guard lock(p.mutex);
      ++p.finished;
      if (!s.isOk() && p.firstError.isOk()) {
        p.firstError = std::move(s);
        p.stop = true;
      }
    }
    p.changed.notify_all();
    if (afterEach && !afterEach()) return;
  }
}

}  // namespace

int analysisThreads() {
  return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
}

Status forEachRankInParallel(storage::TraceReader& reader, int64_t count, int threads,
                             const RankWork& work, const std::function<bool(int64_t)>& onDone) {
  Progress p;
  const int helpers = static_cast<int>(std::clamp<int64_t>(count, 1, threads)) - 1;
  p.helpersRunning = helpers;
  std::vector<std::thread> pool;
  for (int t = 0; t < helpers; ++t) {
    pool.emplace_back([&] {
      auto own = storage::TraceReader::open(reader.path());
      if (own.isOk()) takeItems(**own, count, work, p, nullptr);
      {
        std::lock_guard lock(p.mutex);
        --p.helpersRunning;
      }
      p.changed.notify_all();
    });
  }
  // The calling thread reports every finished item in order, between its
  // own items and then while it waits for the helpers.
  int64_t reported = 0;
  bool cancelled = false;
  auto report = [&]() -> bool {
    int64_t finished = 0;
    {
      std::lock_guard lock(p.mutex);
      finished = p.finished;
    }
    while (reported < finished) {
      ++reported;
      if (onDone && !onDone(reported)) {
        std::lock_guard lock(p.mutex);
        p.stop = cancelled = true;
        return false;
      }
    }
    return true;
  };
  takeItems(reader, count, work, p, report);
  while (!cancelled) {
    {
      std::unique_lock lock(p.mutex);
      p.changed.wait(lock, [&] { return p.finished > reported || p.helpersRunning == 0; });
      if (p.finished == reported && p.helpersRunning == 0) break;
    }
    report();
  }
  for (std::thread& t : pool) t.join();
  if (!p.firstError.isOk()) return p.firstError;
  if (cancelled) return Status::failedPrecondition("analysis cancelled");
  return Status::ok();
}

}  // namespace bubblescope::analysis
