// BackgroundIndexer: builds an OverviewIndex on a thread of its own, so the
// GUI thread only draws while a large run is indexed.
//
// Contract: start() opens a TraceReader of its own on the file (a reader is
// one per thread) and calls OverviewIndex::indexPage page after page until a
// page comes back short (caught up with what was committed), a page fails
// (the error stays in the index's progress), or stop(). `onPage` runs on the
// indexing thread after every page and once more after the last, when
// running() is already false: it must be thread-safe (e.g. post to the GUI
// thread). start(), stop() and the destructor are for one controlling thread;
// the index must outlive the indexing (stop() or the destructor joins).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "gui/overview_index.h"

namespace bubblescope::gui {

class BackgroundIndexer {
 public:
  BackgroundIndexer() = default;
  ~BackgroundIndexer() { stop(); }
  BackgroundIndexer(const BackgroundIndexer&) = delete;
  BackgroundIndexer& operator=(const BackgroundIndexer&) = delete;

  // Stops any indexing still running, then starts indexing run `runId` of
  // the trace at `path` into `index`, `pageEvents` events a page.
  void start(const std::string& path, int64_t runId, OverviewIndex* index, int64_t pageEvents,
             std::function<void()> onPage);
  // Asks the thread to stop after its current page and waits for it.
  void stop();
  // True from start() until the thread has done its last page.
  bool running() const { return running_.load(); }
  // CPU time the indexing thread has used so far (its own, not the
  // process's: a loaded machine does not inflate it), seconds.
  double cpuSeconds() const { return static_cast<double>(cpuNs_.load()) / 1e9; }

 private:
  void run(std::string path, int64_t runId, OverviewIndex* index, int64_t pageEvents,
           std::function<void()> onPage);

  std::thread thread_;
  std::atomic<bool> stopRequested_{false};
  std::atomic<bool> running_{false};
  std::atomic<int64_t> cpuNs_{0};
};

}  // namespace bubblescope::gui
