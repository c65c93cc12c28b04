#include "gui/background_indexer.h"

#include <time.h>

#include <utility>

namespace bubblescope::gui {

namespace {

int64_t threadCpuNs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

}  // namespace

void BackgroundIndexer::start(const std::string& path, int64_t runId, OverviewIndex* index,
                              int64_t pageEvents, std::function<void()> onPage) {
  stop();
  stopRequested_ = false;
  running_ = true;
  cpuNs_ = 0;
  thread_ =
      std::thread(&BackgroundIndexer::run, this, path, runId, index, pageEvents, std::move(onPage));
}

void BackgroundIndexer::stop() {
  stopRequested_ = true;
  if (thread_.joinable()) thread_.join();
  running_ = false;
}

void BackgroundIndexer::run(std::string path, int64_t runId, OverviewIndex* index,
                            int64_t pageEvents, std::function<void()> onPage) {
  const int64_t cpu0 = threadCpuNs();
  auto reader = storage::TraceReader::open(path);
  if (reader.isOk()) {
    while (!stopRequested_.load()) {
      auto n = index->indexPage(**reader, runId, pageEvents);
      cpuNs_ = threadCpuNs() - cpu0;
      if (!n.isOk() || *n < pageEvents) break;  // an error (kept by the index), or caught up
      onPage();
    }
  } else {
    // The GUI's reader opened the file: this one fails only if the file was
    // removed or damaged meanwhile. Said through the index, as a page error.
    index->fail(reader.status());
  }
  cpuNs_ = threadCpuNs() - cpu0;
  running_ = false;
  onPage();
}

}  // namespace bubblescope::gui
